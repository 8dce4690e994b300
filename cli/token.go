package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/home"
)

func newTokenCmd() *cobra.Command {
	var rotate bool
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the bearer token of MCP over HTTP (--rotate makes a new one)",
		Long: `Print the bearer token that agents on other hosts send to MCP over HTTP
(` + "`pinky daemon --http HOST:PORT`" + `), making one when there is none:

  URL:    http://HOST:PORT/mcp
  header: Authorization: Bearer TOKEN

The token lives in $PINKY_HOME/token, readable only by you. A token file that
the group or others may read, or that another user owns, is refused (here, by
a starting daemon and by a running one), as ssh refuses such a private key:
make it yours alone with chmod 600, or replace it. --rotate replaces it: a
running daemon refuses the old token from its next request on, without a
restart. No daemon needs to run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dirs, err := home.Resolve()
			if err != nil {
				return err
			}
			if err := dirs.Ensure(); err != nil {
				return fmt.Errorf("data folder: %w", err)
			}
			var tok string
			if rotate {
				tok, err = home.RotateToken(dirs.Token())
			} else {
				tok, err = home.EnsureToken(dirs.Token())
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			if rotate {
				fmt.Fprintln(cmd.ErrOrStderr(), "pinky: a new token; agents that send the old one are refused from now on")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&rotate, "rotate", false, "replace the token; the old one stops working at once")
	return cmd
}
