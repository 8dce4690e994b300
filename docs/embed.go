// Package docs ships the agent guide, SKILL.md, inside the pinky binary, so
// that `pinky skill` can print or install it where no source tree is at hand.
// docs/SKILL.md stays the one source: this package only embeds it.
package docs

import _ "embed"

// Skill is the agent guide, docs/SKILL.md, byte for byte.
//
//go:embed SKILL.md
var Skill string
