// Command corpus builds the real-app corpus of the commit detector
// (gateway/commit/corpus): it reads each labels/<app>.yaml, takes the
// labeled resources' texts in the eleven languages from the app's fetched
// repository at the labeled commit, and writes rows/<app>.jsonl and
// SOURCES.md. It needs the repositories (fetched bare, as
// $PINKY_MIRRORS/<owner>+<name>/repo); the build and the tests never run it,
// they read what it wrote.
//
//	go run ./scripts/corpus build [--app APP] [--mirrors DIR] [--dir gateway/commit/corpus]
//	go run ./scripts/corpus check [--dir …]   # the labels are well formed (no repositories needed)
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Labels is one app's labels file.
type Labels struct {
	App      string   `yaml:"app"`
	Name     string   `yaml:"name"`
	Repo     string   `yaml:"repo"`
	Commit   string   `yaml:"commit"`
	Licence  string   `yaml:"licence"`
	Category string   `yaml:"category"`
	Platform string   `yaml:"platform"`
	Res      []string `yaml:"res"`
	Strings  []Label  `yaml:"strings"`
}

// Label is one resource's label.
type Label struct {
	Name      string `yaml:"name"`
	Role      string `yaml:"role"`
	Kind      string `yaml:"kind"`
	Lookalike bool   `yaml:"lookalike"`
	Where     string `yaml:"where"`
}

// Row is one resource in one language.
type Row struct {
	App       string `json:"app"`
	Lang      string `json:"lang"`
	Text      string `json:"text"`
	Role      string `json:"role"`
	Kind      string `json:"kind"`
	Lookalike bool   `json:"lookalike"`
	Resource  string `json:"resource"`
	Path      string `json:"path"`
	Repo      string `json:"repo"`
	Commit    string `json:"commit"`
	Licence   string `json:"licence"`
	Category  string `json:"category"`
	Platform  string `json:"platform"`
}

var (
	kinds = []string{"payment", "transfer", "purchase", "send_message", "post", "call", "install_app", "uninstall_app",
		"delete", "change_setting", "open_url", "grant_permission", "sign_in", "none"}
	roles      = []string{"button", "menu_item", "toggle", "link", "field_hint", "text"}
	categories = strings.Fields(`messaging mail social store shopping money browser maps media files notes calendar contacts
phone camera gallery settings tools health travel food news reader keyboard launcher other`)
	// Langs are the corpus's languages, in the order rows are written.
	Langs = []string{"en", "zh-Hans", "zh-Hant", "ja", "ko", "es", "fr", "de", "pt", "ru", "ar"}
	// androidDirs and iosDirs are the folders a language's strings come
	// from, the first that exists.
	androidDirs = map[string][]string{
		"en": {"values"}, "zh-Hans": {"values-zh-rCN", "values-b+zh+Hans", "values-b+zh+CN", "values-b+zh+Hans+CN", "values-zh"},
		"zh-Hant": {"values-zh-rTW", "values-b+zh+Hant", "values-b+zh+TW", "values-b+zh+Hant+TW", "values-zh-rHK", "values-b+zh+HK"},
		"ja":      {"values-ja"}, "ko": {"values-ko"}, "es": {"values-es"}, "fr": {"values-fr"}, "de": {"values-de"},
		"pt": {"values-pt-rBR", "values-b+pt+BR", "values-pt", "values-pt-rPT"}, "ru": {"values-ru"}, "ar": {"values-ar"},
	}
	iosDirs = map[string][]string{
		"en": {"en.lproj", "Base.lproj"}, "zh-Hans": {"zh-Hans.lproj", "zh_CN.lproj", "zh-CN.lproj"}, "zh-Hant": {"zh-Hant.lproj", "zh_TW.lproj", "zh-TW.lproj", "zh-HK.lproj"},
		"ja": {"ja.lproj"}, "ko": {"ko.lproj"}, "es": {"es.lproj", "es-ES.lproj"}, "fr": {"fr.lproj", "fr-FR.lproj"}, "de": {"de.lproj"},
		"pt": {"pt-BR.lproj", "pt.lproj", "pt-PT.lproj"}, "ru": {"ru.lproj"}, "ar": {"ar.lproj"},
	}
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "gateway/commit/corpus", "the corpus folder")
	app := fs.String("app", "", "only this app")
	mirrors := fs.String("mirrors", envOr("PINKY_MIRRORS", "/work/.mirror"), "where the fetched repositories are")
	fs.Parse(os.Args[2:])
	all, err := loadLabels(*dir, *app)
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "check":
		bad := 0
		for _, l := range all {
			for _, e := range l.check() {
				fmt.Fprintf(os.Stderr, "labels/%s.yaml: %s\n", l.App, e)
				bad++
			}
		}
		if bad > 0 {
			os.Exit(1)
		}
		fmt.Printf("%d apps, %d labels: well formed\n", len(all), countLabels(all))
	case "build":
		failed := false
		for _, l := range all {
			if errs := l.check(); len(errs) > 0 {
				for _, e := range errs {
					fmt.Fprintf(os.Stderr, "labels/%s.yaml: %s\n", l.App, e)
				}
				failed = true
				continue
			}
			rows, warns, err := l.build(*mirrors)
			for _, w := range warns {
				fmt.Fprintf(os.Stderr, "%s: %s\n", l.App, w)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", l.App, err)
				failed = true
				continue
			}
			if err := writeRows(filepath.Join(*dir, "rows", l.App+".jsonl"), rows); err != nil {
				fail(err)
			}
			fmt.Printf("%s: %d resources, %d rows, languages %s\n", l.App, len(l.Strings), len(rows), strings.Join(langsOf(rows), " "))
		}
		if *app == "" {
			if err := writeSources(*dir); err != nil {
				fail(err)
			}
		}
		if failed {
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: corpus build|check [--app APP] [--mirrors DIR] [--dir DIR]")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "corpus:", err)
	os.Exit(1)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func loadLabels(dir, only string) ([]Labels, error) {
	files, err := filepath.Glob(filepath.Join(dir, "labels", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Labels
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if only != "" && name != only {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var l Labels
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if l.App != name {
			return nil, fmt.Errorf("%s: app %q; want the file's name %q", f, l.App, name)
		}
		out = append(out, l)
	}
	if only != "" && len(out) == 0 {
		return nil, fmt.Errorf("no labels/%s.yaml", only)
	}
	return out, nil
}

func countLabels(all []Labels) int {
	n := 0
	for _, l := range all {
		n += len(l.Strings)
	}
	return n
}

// check lists what is wrong with the labels file.
func (l Labels) check() []string {
	var errs []string
	if l.Repo == "" || !strings.Contains(l.Repo, "/") {
		errs = append(errs, fmt.Sprintf("repo %q: want owner/name", l.Repo))
	}
	if len(l.Commit) != 40 {
		errs = append(errs, fmt.Sprintf("commit %q: want 40 hex digits", l.Commit))
	}
	if l.Licence == "" {
		errs = append(errs, "licence is required")
	}
	if !slices.Contains(categories, l.Category) {
		errs = append(errs, fmt.Sprintf("category %q: want one of %s", l.Category, strings.Join(categories, " ")))
	}
	if l.Platform != "android" && l.Platform != "ios" {
		errs = append(errs, fmt.Sprintf("platform %q: want android or ios", l.Platform))
	}
	if len(l.Res) == 0 {
		errs = append(errs, "res: at least one folder")
	}
	seen := map[string]bool{}
	for i, s := range l.Strings {
		where := fmt.Sprintf("strings[%d] %s", i, s.Name)
		if s.Name == "" || seen[s.Name] {
			errs = append(errs, where+": name empty or repeated")
		}
		seen[s.Name] = true
		if !slices.Contains(roles, s.Role) {
			errs = append(errs, fmt.Sprintf("%s: role %q: want one of %s", where, s.Role, strings.Join(roles, " ")))
		}
		if !slices.Contains(kinds, s.Kind) {
			errs = append(errs, fmt.Sprintf("%s: kind %q: want one of %s", where, s.Kind, strings.Join(kinds, " ")))
		}
		if s.Lookalike && s.Kind != "none" {
			errs = append(errs, where+": lookalike is only for kind none")
		}
	}
	return errs
}

// build reads the labeled resources in every language.
func (l Labels) build(mirrors string) ([]Row, []string, error) {
	g := repo{dir: filepath.Join(mirrors, strings.Replace(l.Repo, "/", "+", 1), "repo"), commit: l.Commit}
	if _, err := os.Stat(g.dir); err != nil {
		return nil, nil, fmt.Errorf("repository %s is not fetched (%s): fetch it first", l.Repo, g.dir)
	}
	dirs := androidDirs
	if l.Platform == "ios" {
		dirs = iosDirs
	}
	// texts[lang][name] = text, and where it came from.
	texts := map[string]map[string]string{}
	from := map[string]map[string]string{}
	for _, lang := range Langs {
		texts[lang], from[lang] = map[string]string{}, map[string]string{}
		for _, res := range l.Res {
			regional, err := g.regionalDirs(res, lang, l.Platform)
			if err != nil {
				return nil, nil, err
			}
			candidates := append(slices.Clone(dirs[lang]), regional...)
			for _, d := range candidates {
				files, err := g.stringFiles(path.Join(res, d), l.Platform)
				if err != nil {
					return nil, nil, err
				}
				if len(files) == 0 {
					continue
				}
				for _, f := range files {
					data, err := g.show(f)
					if err != nil {
						return nil, nil, err
					}
					var m map[string]string
					if l.Platform == "ios" {
						m, err = parseStrings(data)
					} else {
						m, err = parseAndroid(data)
					}
					if err != nil {
						return nil, nil, fmt.Errorf("%s: %w", f, err)
					}
					for k, v := range m {
						if _, ok := texts[lang][k]; !ok {
							texts[lang][k], from[lang][k] = v, f
						}
					}
				}
				// Every folder of the language is read, the first ones first:
				// a plain folder may hold a few strings, its regional one the rest.
			}
		}
	}
	var rows []Row
	var warns []string
	for _, s := range l.Strings {
		en, ok := texts["en"][s.Name]
		if !ok {
			return nil, nil, fmt.Errorf("resource %q is not in the English strings of %s", s.Name, strings.Join(l.Res, ", "))
		}
		n := 0
		for _, lang := range Langs {
			t, ok := texts[lang][s.Name]
			if !ok || t == "" || (lang != "en" && t == en) {
				continue
			}
			rows = append(rows, Row{App: l.App, Lang: lang, Text: t, Role: s.Role, Kind: s.Kind, Lookalike: s.Lookalike,
				Resource: s.Name, Path: from[lang][s.Name], Repo: l.Repo, Commit: l.Commit, Licence: l.Licence,
				Category: l.Category, Platform: l.Platform})
			n++
		}
		if n < 4 {
			warns = append(warns, fmt.Sprintf("%s is in %d of the languages only", s.Name, n))
		}
	}
	return rows, warns, nil
}

// repo reads files of a bare repository at a commit.
type repo struct{ dir, commit string }

func (g repo) git(args ...string) ([]byte, error) {
	c := exec.Command("git", append([]string{"--git-dir=" + g.dir}, args...)...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// stringFiles lists the string files of a resource folder at the commit:
// Android's XML files (strings.xml, voip_strings.xml, 02-strings.xml…; only
// their <string> resources count), iOS's *.strings; none when the folder is
// not there.
func (g repo) stringFiles(dir, platform string) ([]string, error) {
	out, err := g.git("ls-tree", "--name-only", g.commit, dir+"/")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		base := path.Base(f)
		switch {
		case f == "":
		case platform == "android" && strings.HasSuffix(base, ".xml"):
			// Every XML file: only its <string> resources are read.
			files = append(files, f)
		case platform == "ios" && strings.HasSuffix(base, ".strings"):
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

func (g repo) show(file string) ([]byte, error) { return g.git("show", g.commit+":"+file) }

// regionCodes are the Android language codes whose regional folders
// (values-de-rDE, values-es-rES, values-b+de+DE…) stand in for a language
// with no folder of its own; zh and pt are listed by region already.
var regionCodes = map[string]string{"ja": "ja", "ko": "ko", "es": "es", "fr": "fr", "de": "de", "ru": "ru", "ar": "ar"}

// regionalDirs lists res's regional folders of lang, in name order
// (Android values-<code>-r<REGION> and values-b+<code>+…, iOS
// <code>-<REGION>.lproj): read after the plain ones.
func (g repo) regionalDirs(res, lang, platform string) ([]string, error) {
	code, ok := regionCodes[lang]
	if !ok {
		return nil, nil
	}
	out, err := g.git("ls-tree", "--name-only", "-d", g.commit, res+"/")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		base := path.Base(f)
		switch {
		case platform == "android" && (strings.HasPrefix(base, "values-"+code+"-r") || strings.HasPrefix(base, "values-b+"+code+"+")):
			dirs = append(dirs, base)
		case platform == "ios" && strings.HasPrefix(base, code+"-") && strings.HasSuffix(base, ".lproj"):
			dirs = append(dirs, base)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

func writeRows(file string, rows []Row) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

func langsOf(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Lang) {
			out = append(out, r.Lang)
		}
	}
	return out
}

// writeSources writes SOURCES.md: one row per app.
func writeSources(dir string) error {
	all, err := loadLabels(dir, "")
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# Sources of the real-app corpus\n\nMade by `make corpus` from `labels/`; each row of `rows/<app>.jsonl` also names its file and commit.\n\n")
	b.WriteString("| app | name | repository | commit | licence | category | resources | rows |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, l := range all {
		n, err := countRows(filepath.Join(dir, "rows", l.App+".jsonl"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		fmt.Fprintf(&b, "| %s | %s | [%s](https://github.com/%s) | `%s` | %s | %s | %d | %d |\n",
			l.App, l.Name, l.Repo, l.Repo, l.Commit[:min(12, len(l.Commit))], l.Licence, l.Category, len(l.Strings), n)
	}
	return os.WriteFile(filepath.Join(dir, "SOURCES.md"), []byte(b.String()), 0o644)
}

func countRows(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return bytes.Count(b, []byte("\n")), nil
}
