// The linter (issue 17): type-aware rules for what a reviewer cannot see at a glance, a promise
// nobody awaits and code nobody uses. Formatting is Prettier's (.prettierrc.json).
import tseslint from "typescript-eslint";

// Layers (docs/design/house-style.md, "Layers"): which folders of src/ each folder may not import,
// so dependencies point one way (cli → jobs → console, ops → domain → config, log). The same table
// as the page; a row's files get one rule, matching both static and dynamic imports.
const FOLDERS = [
  ...["cli", "jobs", "console", "ops", "exchange", "streams", "store", "verify", "periods", "statement"],
  ...["export", "archive", "config", "log", "sandbox", "local-services"],
];
const DOMAIN = ["exchange", "streams", "store", "verify", "periods", "statement", "export", "archive"];
const ALL_BUT = (self) => FOLDERS.filter((f) => f !== self);
const LAYERS = [
  ...DOMAIN.map((f) => ({ folder: f, not: ["cli", "jobs", "console", "ops", "sandbox", "local-services"] })),
  { folder: "console", not: ["cli", "jobs", "sandbox", "local-services"] },
  { folder: "ops", not: ["cli", "jobs", "console", "sandbox", "local-services"], queues: true },
  { folder: "jobs", not: ["cli", "sandbox", "local-services"], queues: true },
  ...["config", "log", "sandbox", "local-services"].map((f) => ({ folder: f, not: ALL_BUT(f) })),
];
// Within the bills stream: the entry (bills/index.ts) plans a run and picks a source, bills-v2 or
// bills-v3. The two sources share bills-core and never import each other or the entry, and
// bills-core imports none of them.
const SOURCES = [
  {
    files: ["src/streams/bills-core/**/*.ts"],
    regex: String.raw`(^|/)bills(-v2|-v3)?/`,
    why: "bills-core is what the entry and both sources share: it imports none of them",
  },
  {
    files: ["src/streams/bills-v2/**/*.ts"],
    regex: String.raw`(^|/)bills(-v3)?/`,
    why: "bills/index.ts imports bills-v2, which shares with bills-v3 only through bills-core",
  },
  {
    files: ["src/streams/bills-v3/**/*.ts"],
    regex: String.raw`(^|/)bills(-v2)?/`,
    why: "bills/index.ts imports bills-v3, which shares with bills-v2 only through bills-core",
  },
  {
    files: ["src/streams/bills/**/*.ts"],
    ignores: ["src/streams/bills/index.ts"],
    regex: String.raw`(^|/)bills-v[23]/|^\./index\.ts$`,
    why: "only the entry, bills/index.ts, picks a source, and the stream's other modules never import the entry",
  },
];
const SEE = "docs/design/house-style.md, Layers";

/** The rules for files whose layer forbids `not` (and the queue packages unless `queues`). */
function layerRules(layer, extra = []) {
  const folders = String.raw`^(\.\./)+(${layer.not.join("|")})/`;
  const queues = String.raw`^(bullmq|@bull-board/)`;
  const restricted = [
    { regex: folders, message: `src/${layer.folder} may not import src/{${layer.not.join(",")}} (${SEE}).` },
    ...(layer.queues ? [] : [{ regex: queues, message: `Only src/jobs and src/ops use queues (${SEE}).` }]),
    ...extra.map((e) => ({ regex: e.regex, message: `Import cycle: ${e.why} (${SEE}).` })),
  ];
  const dynamic = restricted.map((r) => ({
    selector: `ImportExpression[source.value=/${r.regex.replaceAll("/", "\\/")}/]`,
    message: r.message,
  }));
  return {
    "no-restricted-imports": ["error", { patterns: restricted }],
    "no-restricted-syntax": ["error", ...dynamic],
  };
}

const layerConfigs = [
  ...LAYERS.map((layer) => ({ files: [`src/${layer.folder}/**/*.ts`], rules: layerRules(layer) })),
  ...SOURCES.map(({ files, ignores, ...source }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: layerRules(
      LAYERS.find((l) => l.folder === "streams"),
      [source],
    ),
  })),
];

export default tseslint.config(
  { ignores: ["src/store/generated/**", "dist/**", "node_modules/**", ".data/**", "coverage/**"] },
  // Lines under src/ at most 120 characters, SQL, strings and comments included; only URLs may run
  // longer (docs/design/house-style.md, "Line length").
  { files: ["src/**/*.ts"], rules: { "max-len": ["error", { code: 120, ignoreUrls: true }] } },
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
  ...layerConfigs,
);
