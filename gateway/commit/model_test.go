package commit

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/screen"
)

func TestModelLoads(t *testing.T) {
	m, err := loadedModel()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(m.Classes, " "), strings.Join(modelClasses, " "); got != want {
		t.Errorf("classes: got %s; want %s", got, want)
	}
	if m.Apps < 30 || m.Rows < 5000 {
		t.Errorf("trained on %d rows of %d apps; want the corpus's training apps", m.Rows, m.Apps)
	}
}

func TestParseModelRefusesBrokenFiles(t *testing.T) {
	good := modelFile
	header := bytes.SplitN(good, []byte("\n"), 3)[1]
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"not a model", []byte("hello\n"), "not a model file"},
		{"no header", []byte(modelMagic), "no header"},
		{"short weights", good[:len(good)-1], "weights"},
		{"unknown class", bytes.Replace(good, []byte(`"sign_in"`), []byte(`"sing_in"`), 1), `unknown class "sing_in"`},
		{"a code of -128", append(append([]byte(modelMagic), header...), append([]byte("\n"), bytes.Repeat([]byte{0x80}, len(good)-len(modelMagic)-len(header)-1)...)...), "-128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseModel(tt.file); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestCodes(t *testing.T) {
	if codebook[0] != 0 || codebook[127] < 0.999999 || codebook[127] > 1.000001 {
		t.Fatalf("codebook ends: got %v, %v; want 0, 1", codebook[0], codebook[127])
	}
	for q := 1; q < 128; q++ {
		if codebook[q] <= codebook[q-1] {
			t.Fatalf("codebook[%d] = %v is not above codebook[%d] = %v", q, codebook[q], q-1, codebook[q-1])
		}
	}
	for _, w := range []float64{0, 1e-4, -0.003, 0.05, -0.4, 1.7, -3.2, 6} {
		q := code(w, 6)
		got := codebook[max(q, -q)] * 6
		if q < 0 {
			got = -got
		}
		// A weight keeps 5 % of itself, or 0.002 near zero.
		if d := math.Abs(got - w); d > 0.05*math.Abs(w)+0.002 {
			t.Errorf("code(%v) = %d stands for %v", w, q, got)
		}
	}
}

// flatModel is a model whose features weigh nothing: its probabilities
// are its biases', none at bias none and every kind at 0.
func flatModel(none float64) *model {
	m := &model{modelHeader: modelHeader{Bits: 8, Fixed: 4, Classes: modelClasses}}
	for _, name := range modelClasses {
		k := Kind(name)
		if name == "none" {
			k = ""
		}
		m.kinds = append(m.kinds, k)
		m.Scale = append(m.Scale, 1)
		m.Bias = append(m.Bias, 0)
	}
	m.Bias[0] = none
	m.w = make([]float32, len(modelClasses)*(1<<8+1<<4))
	return m
}

// TestContextTipsTheModel checks that signs on the screen raise the kinds
// they point to: a control the model knows nothing about asks to send when
// a message is typed, and to move money when a payee and an amount are
// filled in, and commits nothing on a bare screen.
func TestContextTipsTheModel(t *testing.T) {
	m := flatModel(math.Log(5)) // nothing 5/18, each kind 1/18: below askAt
	btn := screen.Node{Role: screen.RoleButton, Label: "Zorblat", Clickable: true}
	message := screen.Node{Role: screen.RoleField, Editable: true, Hint: "Text message", Label: "see you at 6"}
	search := screen.Node{Role: screen.RoleField, Editable: true, Hint: "Search", Label: "see you at 6"}
	payee := screen.Node{Role: screen.RoleField, Editable: true, Hint: "To", Label: "Ana Silva"}
	amount := screen.Node{Role: screen.RoleText, Label: "$250.00"}
	tests := []struct {
		name  string
		nodes []screen.Node
		want  Kind
		say   string
	}{
		{"a bare screen", nil, "", ""},
		{"a message typed", []screen.Node{message}, SendMessage, "with a message typed on the screen"},
		{"a search typed", []screen.Node{search}, "", ""},
		{"a payee and an amount", []screen.Node{payee, amount}, Transfer, "with a recipient filled in and an amount on the screen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := view("com.example", append(tt.nodes, btn)...)
			got := detect(m, askAt, v, Action{Kind: "tap", Target: last(v)})
			if got.Kind != tt.want || !strings.Contains(got.Evidence, tt.say) {
				t.Errorf("got %q (%s); want %q saying %q", got.Kind, got.Evidence, tt.want, tt.say)
			}
		})
	}
}

// TestUnsureAsks checks that the model asks about a kind that costs the
// most to miss when it is only fairly likely, says so with its
// confidence, and does not for a kind that costs less.
func TestUnsureAsks(t *testing.T) {
	btn := func() *screen.View {
		return view("com.example", screen.Node{Role: screen.RoleButton, Label: "Zorblat", Clickable: true})
	}
	for _, tt := range []struct {
		kind Kind
		want Kind
	}{{Delete, Delete}, {Payment, Payment}, {Call, Call}, {ChangeSetting, ""}, {OpenURL, ""}} {
		m := flatModel(0)
		m.Bias[0] = math.Log(60) // nothing 60 %, the kind 30 %, the other twelve 10 % between them
		m.Bias[classOf(tt.kind)] = math.Log(30)
		for j := range m.Bias {
			if j != 0 && j != classOf(tt.kind) {
				m.Bias[j] = math.Log(10.0 / 12)
			}
		}
		v := btn()
		got := detect(m, askAt, v, Action{Kind: "tap", Target: last(v)})
		if got.Kind != tt.want {
			t.Errorf("%s at 30 %%: got %q (%s); want %q", tt.kind, got.Kind, got.Evidence, tt.want)
		}
		if tt.want != "" && !strings.Contains(got.Evidence, "the model is unsure ("+string(tt.kind)+" 30%, nothing 60%) and asks") {
			t.Errorf("%s: evidence %q does not say the model asked and how sure it was", tt.kind, got.Evidence)
		}
	}
}

// TestDialogButtons checks that a button of a dialog about a delete, a
// payment or a message does that unless it says no, whatever its words.
func TestDialogButtons(t *testing.T) {
	dlg := func(title, label string) *screen.View {
		return view("com.example", dialog(), in(1, text(title)), in(1, button(label)))
	}
	tests := []struct {
		title, label string
		want         Kind
	}{
		{"Delete this group?", "Dissolve", Delete},
		{"Delete this group?", "Keep", ""},
		{"Delete this group?", "Learn more", ""},
		{"Pay $5.00 to Ana?", "Zorblat", Payment},
		{"Rename this group", "Zorblat", ""},
		{"Cancel your subscription?", "Yes", ""},
	}
	for _, m := range []*model{nil, flatModel(math.Log(100)), defaultModel()} {
		for _, tt := range tests {
			v := dlg(tt.title, tt.label)
			if got := detect(m, askAt, v, Action{Kind: "tap", Target: last(v)}); got.Kind != tt.want {
				t.Errorf("model %v: %q in %q: got %q (%s); want %q", m != nil, tt.label, tt.title, got.Kind, got.Evidence, tt.want)
			}
		}
	}
}

func TestAppCategory(t *testing.T) {
	for _, tt := range []struct {
		category string
		label    string
		want     Kind
	}{
		{"payments", "Send", Transfer},
		{"money", "Send", Transfer},
		{"messaging", "Send", SendMessage},
		{"stores", "Update", InstallApp},
		{"store", "Get", InstallApp},
		{"notes", "Get", ""},
	} {
		v := view("", button(tt.label))
		if got := Detect(v, Action{Kind: "tap", Target: last(v), AppCategory: tt.category}); got.Kind != tt.want {
			t.Errorf("%q in a %s app: got %q (%s); want %q", tt.label, tt.category, got.Kind, got.Evidence, tt.want)
		}
	}
}
