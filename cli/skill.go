package cli

// pinky skill: the agent guide (docs/SKILL.md), shipped inside the binary.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/docs"
	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// skillNamePattern is what the Agent Skills format takes as a skill's
// name, which is also its folder's name.
var skillNamePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// skillName is the name in SKILL.md's front matter.
func skillName(skill string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(skill))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return "", fmt.Errorf("SKILL.md has no front matter")
	}
	for sc.Scan() && strings.TrimSpace(sc.Text()) != "---" {
		if v, ok := strings.CutPrefix(sc.Text(), "name:"); ok {
			name := strings.Trim(strings.TrimSpace(v), `"'`)
			if !skillNamePattern.MatchString(name) {
				return "", fmt.Errorf("SKILL.md's name %q is not a skill name", name)
			}
			return name, nil
		}
	}
	return "", fmt.Errorf("SKILL.md's front matter has no name")
}

func newSkillCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "skill [--install DIR]",
		Short: "Print the agent guide (SKILL.md), or install it into an agent's skills folder",
		Long: `Print the guide that teaches an agent to use phones through pinky's MCP
tools: an Agent Skills SKILL.md, the same as docs/SKILL.md of this version.

--install DIR writes it as DIR/<name>/SKILL.md, <name> being the skill's name
(pinky-phones), as the skills format wants: DIR is the host's skills folder,
for example ~/.claude/skills (Claude Code, every project), .claude/skills (one
project), ~/.codex/skills (Codex) or ~/.agents/skills. An older copy there is
replaced.`,
		Example: `  pinky skill > SKILL.md
  pinky skill --install ~/.claude/skills`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				_, err := fmt.Fprint(cmd.OutOrStdout(), docs.Skill)
				return err
			}
			name, err := skillName(docs.Skill)
			if err != nil {
				return err
			}
			folder := filepath.Join(dir, name)
			if err := os.MkdirAll(folder, 0o755); err != nil {
				return err
			}
			path := filepath.Join(folder, "SKILL.md")
			if err := atomicfile.Write(path, []byte(docs.Skill)); err != nil {
				return err
			}
			if err := os.Chmod(path, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Wrote %s\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "install", "", "write SKILL.md into this skills folder instead of printing it")
	return cmd
}
