// What a caller of runExport must change: a bad --out, --account or --coin, found before any line
// is written. The command line ends it as a usage error; other failures are plain errors.
export class ExportRequestError extends Error {
  override name = "ExportRequestError";
}
