// The certificate verification failures Node reports (err.code, OpenSSL's results), by what fixes
// them: PostgreSQL's and Redis's TLS errors both name the fix from these (store/pg-config.ts,
// config/redis-connection.ts).

/** The certificate does not name the host connected to. */
export const HOST_MISMATCH = new Set(["ERR_TLS_CERT_ALTNAME_INVALID", "HOSTNAME_MISMATCH"]);
/** The certificate is out of its validity period. */
export const EXPIRED = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"]);
/** The chain does not lead to a trusted CA. */
export const UNVERIFIED = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "INVALID_CA",
  "INVALID_PURPOSE",
]);
