// Types of scripts/dist.js (plain JavaScript, see there), for TypeScript callers such as the benchmarks.
export declare const ROOT: string;
export declare const SRC_DIR: string;
export declare const DIST_DIR: string;
export declare const MANIFEST_FILE: string;
/** Every file under `src` (relative path, sorted) with its size and modification time. */
export declare function sourceManifest(src?: string): Record<string, string>;
/** True when dist/ was built from src/ exactly as it is now. */
export declare function distIsCurrent(): boolean;
