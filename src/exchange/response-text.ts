// Response bodies arrive as bytes. The text to parse is their UTF-8 decoding; bytes that are not
// UTF-8 become U+FFFD (the replacement character), as in every HTTP client, but here the caller is
// told, so that no record holding a replaced character is stored as if the exchange had sent it.
const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

export interface ResponseText {
  text: string;
  /** Some bytes were not UTF-8 and were replaced by U+FFFD in `text`. */
  invalidUtf8: boolean;
}

export function decodeResponseText(bytes: Uint8Array): ResponseText {
  try {
    return { text: strict.decode(bytes), invalidUtf8: false };
  } catch {
    return { text: lenient.decode(bytes), invalidUtf8: true };
  }
}
