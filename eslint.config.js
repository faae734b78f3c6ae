// The linter (issue 17): type-aware rules for what a reviewer cannot see at a glance, a promise
// nobody awaits and code nobody uses. Formatting is Prettier's (.prettierrc.json).
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["src/store/generated/**", "dist/**", "node_modules/**", ".data/**", "coverage/**"] },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "no-unused-private-class-members": "error",
      "no-unreachable": "error",
      "no-sequences": "error",
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
);
