package cli

// pinky mcp install / uninstall: write pinky's server entry into an agent
// host's MCP configuration, or take it out.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

const (
	defaultMCPURL   = "http://127.0.0.1:8765/mcp"
	defaultTokenEnv = "PINKY_TOKEN"
	scopeUser       = "user"
	scopeProject    = "project"
)

// installOpts is what one install or uninstall writes, and where.
type installOpts struct {
	http      bool
	url       string
	tokenEnv  string
	command   string // the absolute path of pinky
	pinkyHome string // PINKY_HOME for the entry's environment; "" for none
	project   string // the project folder, for the project scope
	home      string // the user's home folder
	configDir string // the OS's per-user configuration folder
	codexHome string // $CODEX_HOME, or ""
	// goos and localAppData find the Microsoft Store build of Claude
	// Desktop on Windows.
	goos, localAppData string
}

// mcpHost is one agent host: where its configuration lives and what
// pinky's entry in it looks like.
type mcpHost struct {
	name, title string
	// key is the JSON key that holds the servers; "" for Codex's TOML.
	key string
	// scopes are the host's scopes, the default first, and the file of each.
	scopes []string
	file   func(scope string, o installOpts) string
	// noHTTP, when set, says why the host takes no HTTP entry here.
	noHTTP string
	// entry is pinky's JSON entry (for JSON hosts) or its TOML tables.
	entry func(o installOpts) string
	// restart says how the host picks the change up.
	restart string
}

func (h mcpHost) isTOML() bool { return h.key == "" }

// stdioEntry and httpEntry are JSON entries; the fields are in the order
// the hosts' documentation shows them.
type stdioEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

type httpEntry struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// jsonEntry builds a JSON host's entry. typ is the "type" the host wants
// ("" for none); tokenRef how the host writes "the value of variable V" in
// a header.
func jsonEntry(typ, httpType string, tokenRef func(string) string) func(installOpts) string {
	return func(o installOpts) string {
		if o.http {
			return string(marshalJSON(httpEntry{Type: httpType, URL: o.url,
				Headers: map[string]string{"Authorization": "Bearer " + tokenRef(o.tokenEnv)}}))
		}
		e := stdioEntry{Type: typ, Command: o.command, Args: []string{"mcp"}}
		if o.pinkyHome != "" {
			e.Env = map[string]string{"PINKY_HOME": o.pinkyHome}
		}
		return string(marshalJSON(e))
	}
}

// codexEntry is pinky's table for Codex's config.toml. Codex refuses a
// token written in the file; bearer_token_env_var names the variable.
func codexEntry(o installOpts) string {
	var b strings.Builder
	b.WriteString("[mcp_servers.pinky]\n")
	if o.http {
		fmt.Fprintf(&b, "url = %s\nbearer_token_env_var = %s\n", jsonString(o.url), jsonString(o.tokenEnv))
	} else {
		fmt.Fprintf(&b, "command = %s\nargs = [\"mcp\"]\n", jsonString(o.command))
		b.WriteString("# `pinky mcp` may start the daemon on first use.\n")
	}
	b.WriteString("startup_timeout_sec = 30\n")
	b.WriteString("# phone_ask_person and phone_approval wait for the person; give them time.\n")
	b.WriteString("tool_timeout_sec = 900\n")
	if !o.http && o.pinkyHome != "" {
		fmt.Fprintf(&b, "\n[mcp_servers.pinky.env]\nPINKY_HOME = %s\n", jsonString(o.pinkyHome))
	}
	return b.String()
}

// mcpHosts are the hosts pinky mcp install knows, by --host name.
var mcpHosts = []mcpHost{
	{
		name: "claude-code", title: "Claude Code", key: "mcpServers",
		scopes: []string{scopeUser, scopeProject},
		file: func(scope string, o installOpts) string {
			if scope == scopeProject {
				return filepath.Join(o.project, ".mcp.json")
			}
			return filepath.Join(o.home, ".claude.json")
		},
		entry:   jsonEntry("stdio", "http", func(v string) string { return "${" + v + "}" }),
		restart: "Start a new Claude Code session (or run /mcp) to load it; a project's .mcp.json asks for approval on first use.",
	},
	{
		name: "codex", title: "Codex",
		scopes: []string{scopeUser, scopeProject},
		file: func(scope string, o installOpts) string {
			if scope == scopeProject {
				return filepath.Join(o.project, ".codex", "config.toml")
			}
			if o.codexHome != "" {
				return filepath.Join(o.codexHome, "config.toml")
			}
			return filepath.Join(o.home, ".codex", "config.toml")
		},
		entry:   codexEntry,
		restart: "Start Codex again to load it (a project's .codex/config.toml is read only in a trusted project).",
	},
	{
		name: "cursor", title: "Cursor", key: "mcpServers",
		scopes: []string{scopeUser, scopeProject},
		file: func(scope string, o installOpts) string {
			if scope == scopeProject {
				return filepath.Join(o.project, ".cursor", "mcp.json")
			}
			return filepath.Join(o.home, ".cursor", "mcp.json")
		},
		entry:   jsonEntry("stdio", "", func(v string) string { return "${env:" + v + "}" }),
		restart: "Restart Cursor, then turn pinky on under Settings, MCP.",
	},
	{
		name: "vscode", title: "VS Code", key: "servers",
		scopes: []string{scopeUser, scopeProject},
		file: func(scope string, o installOpts) string {
			if scope == scopeProject {
				return filepath.Join(o.project, ".vscode", "mcp.json")
			}
			return filepath.Join(o.configDir, "Code", "User", "mcp.json")
		},
		entry:   jsonEntry("stdio", "http", func(v string) string { return "${env:" + v + "}" }),
		restart: "VS Code picks the change up; start the server from the MCP view or mcp.json if it does not.",
	},
	{
		name: "claude-desktop", title: "Claude Desktop", key: "mcpServers",
		scopes: []string{scopeUser},
		file: func(_ string, o installOpts) string {
			// The Microsoft Store (MSIX) build keeps its folder in its
			// package's virtualized AppData.
			if o.goos == "windows" && o.localAppData != "" {
				if m, _ := filepath.Glob(filepath.Join(o.localAppData, "Packages", "Claude_*", "LocalCache", "Roaming", "Claude")); len(m) == 1 {
					return filepath.Join(m[0], "claude_desktop_config.json")
				}
			}
			return filepath.Join(o.configDir, "Claude", "claude_desktop_config.json")
		},
		noHTTP: "Claude Desktop's claude_desktop_config.json takes local (stdio) servers only: install without --http " +
			"on the daemon's machine, or add the URL as a custom connector in Claude Desktop's settings",
		entry:   jsonEntry("", "", nil),
		restart: "Quit Claude Desktop and start it again to load it.",
	},
}

func hostNames() []string {
	var names []string
	for _, h := range mcpHosts {
		names = append(names, h.name)
	}
	return names
}

func findHost(name string) (mcpHost, error) {
	for _, h := range mcpHosts {
		if h.name == name {
			return h, nil
		}
	}
	if name == "" {
		return mcpHost{}, fmt.Errorf("say which agent host with --host (%s)", strings.Join(hostNames(), ", "))
	}
	return mcpHost{}, fmt.Errorf("unknown host %q; the hosts are %s", name, strings.Join(hostNames(), ", "))
}

// scopeOf checks the --scope asked for against the host's scopes.
func (h mcpHost) scopeOf(asked string) (string, error) {
	if asked == "" {
		return h.scopes[0], nil
	}
	for _, s := range h.scopes {
		if s == asked {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s has no %q scope (it has %s)", h.title, asked, strings.Join(h.scopes, ", "))
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolveOpts fills in the environment's part of the options.
func resolveOpts(o *installOpts, projectDir string) error {
	var err error
	if o.home, err = os.UserHomeDir(); err != nil {
		return fmt.Errorf("no home folder: %w", err)
	}
	if o.configDir, err = os.UserConfigDir(); err != nil {
		return fmt.Errorf("no configuration folder: %w", err)
	}
	if o.project, err = filepath.Abs(projectDir); err != nil {
		return err
	}
	o.codexHome = os.Getenv("CODEX_HOME")
	o.goos, o.localAppData = runtime.GOOS, os.Getenv("LOCALAPPDATA")
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where pinky is: %w", err)
	}
	if o.command, err = filepath.Abs(exe); err != nil {
		return err
	}
	if h := os.Getenv("PINKY_HOME"); h != "" {
		if o.pinkyHome, err = filepath.Abs(h); err != nil {
			return fmt.Errorf("PINKY_HOME: %w", err)
		}
	}
	if o.http {
		u, err := url.Parse(o.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--url %q is not an http or https URL (like %s)", o.url, defaultMCPURL)
		}
		if !envName.MatchString(o.tokenEnv) {
			return fmt.Errorf("--token-env %q is not an environment variable's name", o.tokenEnv)
		}
	}
	return nil
}

// snippet is a whole configuration file holding pinky's entry alone.
func (h mcpHost) snippet(o installOpts) string {
	entry := h.entry(o)
	if h.isTOML() {
		return entry
	}
	return string(indentJSON(json.RawMessage(`{` + string(jsonString(h.key)) + `:{"pinky":` + entry + `}}`)))
}

func newMCPInstallCmd() *cobra.Command {
	var (
		o                installOpts
		host, scope, dir string
		printOnly        bool
	)
	cmd := &cobra.Command{
		Use:   "install --host HOST",
		Short: "Add pinky to an agent host's MCP configuration (claude-code, codex, cursor, vscode, claude-desktop)",
		Long: `Add pinky's server entry to an agent host's MCP configuration file, keeping
every other entry of the file; the old file is kept beside it as
FILE.bak-TIME. A file pinky cannot read (not valid JSON or TOML) is left as it is.

The entry runs this pinky binary, by its absolute path, as ` + "`pinky mcp`" + ` (with
PINKY_HOME when it is set). With --http it points to a daemon's MCP URL
instead (pinky daemon --http), and the host reads the bearer token from an
environment variable (--token-env, PINKY_TOKEN by default) when it starts:
the token itself is never written, so pinky token --rotate needs only the
variable updated.

  host            user scope (the default)                    --scope project
  claude-code     ~/.claude.json                               .mcp.json
  codex           ~/.codex/config.toml (or $CODEX_HOME's)      .codex/config.toml
  cursor          ~/.cursor/mcp.json                           .cursor/mcp.json
  vscode          <config>/Code/User/mcp.json                  .vscode/mcp.json
  claude-desktop  <config>/Claude/claude_desktop_config.json   (none)

<config> is ~/Library/Application Support on macOS, %APPDATA% on Windows and
~/.config on Linux. Project files go in --dir (the current folder by default).
--print prints the configuration instead of writing it.`,
		Example: `  pinky mcp install --host claude-code
  pinky mcp install --host vscode --scope project
  pinky mcp install --host codex --http --url https://phones.example.org/mcp
  pinky mcp install --host cursor --print`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := findHost(host)
			if err != nil {
				return err
			}
			if scope, err = h.scopeOf(scope); err != nil {
				return err
			}
			if o.http && h.noHTTP != "" {
				return errors.New(h.noHTTP)
			}
			if err := resolveOpts(&o, dir); err != nil {
				return err
			}
			path := h.file(scope, o)
			if strings.Contains(o.command, "go-build") {
				fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s is a temporary build (go run); the host will not find it later. Install pinky (make build, go install) and run this from there.\n", o.command)
			}
			if printOnly {
				fmt.Fprint(cmd.OutOrStdout(), h.snippet(o))
				fmt.Fprintf(cmd.ErrOrStderr(), "Merge this into %s (or run the command without --print to do it).\n", path)
				if h.name == "claude-code" && !strings.Contains(h.entry(o), "'") {
					fmt.Fprintf(cmd.ErrOrStderr(), "Or: claude mcp add-json --scope %s pinky '%s'\n", scope, h.entry(o))
				}
				return nil
			}
			res, err := editConfig(path, scope == scopeUser, func(data []byte) ([]byte, bool, bool, error) {
				if h.isTOML() {
					return editTOML(data, h.entry(o))
				}
				out, changed, err := installJSON(data, h.key, json.RawMessage(h.entry(o)))
				return out, changed, false, err
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if !res.changed {
				fmt.Fprintf(w, "pinky is already in %s (%s, %s scope); nothing changed.\n", res.path, h.title, scope)
			} else {
				fmt.Fprintf(w, "Added pinky to %s (%s scope): %s\n", h.title, scope, res.path)
				res.report(w)
				fmt.Fprintln(w, h.restart)
			}
			if o.http {
				fmt.Fprintf(w, "%s reads the token from $%s: set it where %s starts, for example\n  export %s=\"$(pinky token)\"   # on the daemon's machine\n",
					h.title, o.tokenEnv, h.title, o.tokenEnv)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "", "the agent host: "+strings.Join(hostNames(), ", "))
	f.StringVar(&scope, "scope", "", "user (every project; the default) or project (the --dir folder), where the host has both")
	f.StringVar(&dir, "dir", ".", "the project folder, for --scope project")
	f.BoolVar(&printOnly, "print", false, "print the configuration instead of writing it")
	f.BoolVar(&o.http, "http", false, "point the host to a daemon's MCP URL over HTTP instead of running pinky mcp")
	f.StringVar(&o.url, "url", defaultMCPURL, "the daemon's MCP URL, with --http")
	f.StringVar(&o.tokenEnv, "token-env", defaultTokenEnv, "the environment variable the host reads the bearer token from, with --http")
	cmd.RegisterFlagCompletionFunc("host", hostCompletion)
	return cmd
}

func newMCPUninstallCmd() *cobra.Command {
	var host, scope, dir string
	cmd := &cobra.Command{
		Use:   "uninstall --host HOST",
		Short: "Remove pinky from an agent host's MCP configuration",
		Long: `Remove pinky's server entry from an agent host's MCP configuration file (the
file pinky mcp install writes; see its help), keeping every other entry; the
old file is kept beside it as FILE.bak-TIME.`,
		Example: `  pinky mcp uninstall --host claude-code
  pinky mcp uninstall --host vscode --scope project`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := findHost(host)
			if err != nil {
				return err
			}
			if scope, err = h.scopeOf(scope); err != nil {
				return err
			}
			var o installOpts
			if err := resolveOpts(&o, dir); err != nil {
				return err
			}
			path := h.file(scope, o)
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(cmd.OutOrStdout(), "There is no %s; nothing to remove.\n", path)
				return nil
			}
			res, err := editConfig(path, scope == scopeUser, func(data []byte) ([]byte, bool, bool, error) {
				if h.isTOML() {
					return editTOML(data, "")
				}
				out, changed, err := uninstallJSON(data, h.key)
				return out, changed, false, err
			})
			if err != nil {
				return err
			}
			if !res.changed {
				fmt.Fprintf(cmd.OutOrStdout(), "pinky is not in %s; nothing changed.\n", res.path)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed pinky from %s (%s scope): %s\n", h.title, scope, res.path)
			res.report(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "", "the agent host: "+strings.Join(hostNames(), ", "))
	f.StringVar(&scope, "scope", "", "user (the default) or project, where the host has both")
	f.StringVar(&dir, "dir", ".", "the project folder, for --scope project")
	cmd.RegisterFlagCompletionFunc("host", hostCompletion)
	return cmd
}

func hostCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return hostNames(), cobra.ShellCompDirectiveNoFileComp
}

// editResult is what editConfig did.
type editResult struct {
	path    string // the file written (a symbolic link's target)
	changed bool
	backup  string // the old file's copy; "" when there was none
	lost    bool   // the file's comments were not kept
}

func (r editResult) report(w io.Writer) {
	if r.backup != "" {
		fmt.Fprintf(w, "The old file is kept as %s.\n", r.backup)
	}
	if r.lost {
		fmt.Fprintf(w, "Note: the file had to be written anew, without its comments; they are in the backup.\n")
	}
}

// editConfig reads the file at path (none is an empty file), applies
// edit, and when it changed writes the result atomically, after copying
// the old file to path.bak-TIME. A file edit refuses is left as it is.
func editConfig(path string, private bool, edit func([]byte) ([]byte, bool, bool, error)) (editResult, error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target // keep the link, change the file it points to
	}
	res := editResult{path: path}
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	out, changed, lost, err := edit(data)
	if errors.Is(err, errMalformed) {
		return res, fmt.Errorf("%s: %v; it was not changed: fix it, or move it away and run this again, or add the entry by hand (--print shows it)",
			path, strings.TrimPrefix(err.Error(), errMalformed.Error()+": "))
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	res.changed, res.lost = changed, lost
	if !changed {
		return res, nil
	}
	mode := fs.FileMode(0o600)
	if exists {
		st, err := os.Stat(path)
		if err != nil {
			return res, err
		}
		mode = st.Mode().Perm()
		if res.backup, err = writeBackup(path, data); err != nil {
			return res, fmt.Errorf("keeping a copy of %s: %w; it was not changed", path, err)
		}
	} else {
		dirMode := fs.FileMode(0o755)
		if private {
			dirMode = 0o700
		}
		if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
			return res, err
		}
	}
	if err := atomicfile.Write(path, out); err != nil {
		return res, err
	}
	if mode != 0o600 {
		if err := os.Chmod(path, mode); err != nil {
			return res, err
		}
	}
	return res, nil
}

// writeBackup copies data to path.bak-TIME (a new name, never an old
// backup's), readable by its owner only: the file may hold others' tokens.
func writeBackup(path string, data []byte) (string, error) {
	base := path + ".bak-" + time.Now().UTC().Format("20060102T150405Z")
	name := base
	for i := 1; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			name = fmt.Sprintf("%s-%d", base, i)
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
}
