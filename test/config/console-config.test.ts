// The console's variables: CONSOLE_ENABLED, CONSOLE_TOKEN, CONSOLE_HOST and CONSOLE_PORT, with their
// defaults and a refusal naming the variable (never a token's value).
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";

describe("console configuration", () => {
  it("is off, without a token, on 127.0.0.1:9470 by default", () => {
    expect(loadConfig({}).console).toEqual({ enabled: false, token: undefined, host: "127.0.0.1", port: 9470 });
  });

  it("reads every variable", () => {
    const token = "0123456789abcdef0123456789abcdef";
    expect(
      loadConfig({ CONSOLE_ENABLED: "TRUE", CONSOLE_TOKEN: token, CONSOLE_HOST: "0.0.0.0", CONSOLE_PORT: "0" }).console,
    ).toEqual({ enabled: true, token, host: "0.0.0.0", port: 0 });
  });

  it.each([
    ["CONSOLE_ENABLED", "yes", /CONSOLE_ENABLED must be true or false/],
    ["CONSOLE_TOKEN", "too-short", /CONSOLE_TOKEN must be 16-512 characters/],
    ["CONSOLE_TOKEN", "has a space in it 0123456789", /CONSOLE_TOKEN must be 16-512 characters/],
    ["CONSOLE_TOKEN", "semi;colon;0123456789abcdef", /CONSOLE_TOKEN must be 16-512 characters/],
    ["CONSOLE_HOST", "bad host", /CONSOLE_HOST must be a host name or an IP address/],
    ["CONSOLE_PORT", "65536", /CONSOLE_PORT must be a port number/],
  ])("refuses %s=%j, naming it and not the value", (name, value, message) => {
    const load = () => loadConfig({ [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
    // Thrown, but its message does not repeat the value (a token is a secret).
    expect(load).not.toThrow(value);
  });
});
