//! Rule-by-rule tests: each names the rule ids of rules.md it pins down.
