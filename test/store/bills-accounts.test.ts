// Which account a command over the stored bills is about: the one named (if it has bills), or the
// only one with bills; anything else is refused, saying whether the command line must change.
import { describe, expect, it } from "vitest";
import { AccountChoiceError, chooseAccount } from "../../src/store/bills-accounts.ts";

function refusal(accounts: string[], given?: string): AccountChoiceError {
  try {
    chooseAccount(accounts, given);
  } catch (err) {
    if (err instanceof AccountChoiceError) return err;
    throw err;
  }
  throw new Error("chooseAccount did not refuse");
}

describe("chooseAccount", () => {
  it("takes the named account when it has bills, else the only one", () => {
    expect(chooseAccount(["alpha", "beta"], "beta")).toBe("beta");
    expect(chooseAccount(["alpha"], undefined)).toBe("alpha");
  });

  it("refuses an unknown name, several accounts unnamed, and no bills at all", () => {
    expect(refusal(["alpha", "beta"], "gamma")).toMatchObject({
      usage: true,
      message: "--account gamma: no bills are stored for that account (accounts with bills: alpha, beta)",
    });
    expect(refusal(["alpha", "beta"])).toMatchObject({
      usage: true,
      message: "several accounts have bills (alpha, beta): choose one with --account",
    });
    expect(refusal([])).toMatchObject({ usage: false, message: "no bills are stored yet: sync first" });
    expect(refusal([], "alpha").message).toContain("(accounts with bills: none)");
  });
});
