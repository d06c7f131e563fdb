// Package permission is MassGen v0.1.97's permission engine (massgen/permissions): rules
// `allow` / `ask` / `deny` over `action(target)`, role presets, a risk tier for calls no rule
// covers, and what an `ask` becomes when nobody answers (automation_default). It decides; the
// Gate (gate.go) asks the person, publishes the events and writes the audit ledger.
//
// Precedence is MassGen's: a hardline floor of catastrophic commands is denied whatever the
// rules say; then the deny rules of every scope, then the allow rules, then the ask rules
// (so deny wins across scopes and an explicit allow silences the risk tier); a call no rule
// matches is allowed when its risk is low and asked about otherwise.
package permission
