package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEveryPackageHasADocComment walks the module's packages (as go list
// ./... sees them, from the module's root two folders up) and fails for
// each one without a doc comment: "// Package x …" for a library, and
// "// Command x …" for a program. It lives here because the kit is the
// module's shared test code; it checks the whole tree, this package
// included.
func TestEveryPackageHasADocComment(t *testing.T) {
	c := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Doc}}", "./...")
	c.Dir = "../.."
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, out)
	}
	n := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		path, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		name, doc, _ := strings.Cut(rest, "\t")
		n++
		if msg := docProblem(name, doc); msg != "" {
			t.Errorf("%s: %s", path, msg)
		}
	}
	if n < 10 {
		t.Errorf("go list ./... listed %d packages; want the module's (at least 10)", n)
	}
}

// docProblem says what is wrong with a package's doc comment (go list's
// synopsis of it), or "" when nothing is.
func docProblem(name, doc string) string {
	want := "Package " + name + " "
	if name == "main" {
		want = "Command "
	}
	switch {
	case doc == "":
		return "no doc comment; add one that starts \"// " + want + "…\" (in doc.go when the package has several files)"
	case !strings.HasPrefix(doc, want):
		return "the doc comment starts " + quoteStart(doc) + "; want \"" + want + "…\""
	}
	return ""
}

func quoteStart(s string) string {
	if f := strings.Fields(s); len(f) > 2 {
		s = strings.Join(f[:2], " ") + " …"
	}
	return "\"" + s + "\""
}

func TestDocProblem(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      string // a part of the problem; "" for none
	}{
		{"screen", "Package screen turns the element tree into a view.", ""},
		{"main", "Command pinky is the command line.", ""},
		{"screen", "", "no doc comment"},
		{"screen", "Package view turns the element tree into a view.", `starts "Package view …"`},
		{"screen", "Screen turns the element tree into a view.", "want \"Package screen …\""},
		{"main", "Package main runs pinky.", "want \"Command …\""},
		{"main", "", "no doc comment"},
	} {
		t.Run(tt.name+" "+tt.doc, func(t *testing.T) {
			got := docProblem(tt.name, tt.doc)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
