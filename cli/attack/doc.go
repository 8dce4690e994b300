// Package attack is the red-team suite: each test is an attack that once
// broke the promise to the person (issue "Close the holes"), tried as an
// attacker would, through the real process boundary — an agent over a real
// `pinky mcp` pipe, the virtual phones as a real driver process, the
// person's CLI — and it fails if the hole opens again. `make test` runs it.
//
// Each file is one family of attacks; the harness is internal/e2e.
package attack
