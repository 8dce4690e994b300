package commit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// The trainer of the learned model (model.go). `make commit-model` runs
// TestModelIsTrainedFromTheCorpus with UPDATE_MODEL=1, which writes
// model.bin; without it the test trains again and fails unless the result
// is byte for byte the committed file.
//
// Training is deterministic: one thread, the examples in a fixed order,
// shuffled by a seeded generator of our own, arithmetic written so that no
// compiler fuses a multiply and an add, and an exponential of our own
// (math.Exp may use the CPU's fused instructions).

// trainConfig is the trainer's settings; they are part of the digest.
type trainConfig struct {
	Bits      uint    // log2 of the text features' buckets
	Fixed     uint    // log2 of the fixed features' buckets
	Epochs    int     // passes over the examples
	Rate      float64 // AdaGrad's learning rate
	L2        float64 // L2 penalty on the weights an example touches
	Synthetic bool    // train on testdata/corpus.tsv too
	Tables    bool    // train on the word tables' phrases too
	// Weight is how much more an example of a kind that costs the most
	// to miss (askFirst) counts than the others; 0 is 1.
	Weight float64
}

// trainSettings are the settings of the committed model, chosen by
// cross-validation (TestCrossValidation). A Weight of 1.5 to 3 moved the
// figures along the same curve as a lower askAt, so it is left at 1.
var trainSettings = trainConfig{Bits: 14, Fixed: 10, Epochs: 8, Rate: 0.2, L2: 3e-4, Synthetic: true, Tables: true}

// example is one training example.
type example struct {
	featureSet
	class int // index in modelClasses
}

// modelClasses are the model's classes: nothing, then the kinds.
var modelClasses = append([]string{"none"}, func() []string {
	var s []string
	for _, k := range Kinds {
		s = append(s, string(k))
	}
	return s
}()...)

func classOf(k Kind) int {
	if k == "" {
		return 0
	}
	for i, c := range modelClasses {
		if c == string(k) {
			return i
		}
	}
	panic("no class for " + k)
}

// exampleOf featurizes a text as the detector's model path does.
func exampleOf(text string, r role, app appClass, k Kind) example {
	in := modelInput{text: normalize(text), raw: text, role: r, app: app}
	var buf [16]match
	in.tables = longest(controls.scan(in.text, buf[:0]))
	return example{featureSet: features(&in, nil), class: classOf(k)}
}

// realExamples featurizes corpus rows.
func realExamples(rows []realRow) []example {
	out := make([]example, 0, len(rows))
	for _, r := range rows {
		ro, _ := parseRole(r.Role)
		out = append(out, exampleOf(r.Text, ro, appOf(r.Category, ""), r.want()))
	}
	return out
}

// syntheticExamples featurizes the rows of testdata/corpus.tsv that a
// model can learn from: those judged without a dialog or a screen around
// them, in a role the real corpus has.
func syntheticExamples(t testing.TB) []example {
	var out []example
	for _, r := range readCorpus(t) {
		app := ""
		skip := false
		for part := range strings.SplitSeq(r.context, "; ") {
			key, val, _ := strings.Cut(part, "=")
			switch key {
			case "app":
				app = val
			case "dialog", "screen":
				skip = true
			}
		}
		var ro role
		switch r.role {
		case "button":
			ro = roleButton
		case "item":
			ro = roleMenuItem
		case "link":
			ro = roleLink
		case "switch", "checkbox":
			ro = roleToggle
		case "text":
			ro = roleText
		default:
			skip = true // fields are judged on submit, tabs never commit
		}
		if !skip {
			out = append(out, exampleOf(r.text, ro, classify(app), Kind(r.want)))
		}
	}
	return out
}

// tableExamples are the word tables' phrases as buttons: what the tables
// know, for the model to generalize from (a conjugation shares most of a
// verb's character n-grams).
func tableExamples() []example {
	var out []example
	for _, l := range controlLists {
		k, app := l.kind, appOther
		switch l.kind {
		case kindConfirm, kindReview:
			continue // they take their dialog's kind
		case kindNot, kindCancel:
			k = ""
		case kindStore:
			k, app = InstallApp, appStore
		case kindSave:
			k, app = ChangeSetting, appSettings
		}
		for w := range strings.SplitSeq(l.words, "|") {
			if normalize(w) != "" {
				out = append(out, exampleOf(w, roleButton, app, k))
			}
		}
	}
	return out
}

// trainingSet is every example the model learns from, and the digest of
// what it was made from.
func trainingSet(t testing.TB, cfg trainConfig, apps []string) ([]example, string, int) {
	rows, files := readRows(t, apps)
	h := sha256.New()
	fmt.Fprintf(h, "config %+v\nfeatures v2\n", cfg)
	for i, f := range files {
		fmt.Fprintf(h, "rows %s %d\n", apps[i], len(f))
		h.Write(f)
	}
	exs := realExamples(rows)
	if cfg.Synthetic {
		b, err := os.ReadFile("testdata/corpus.tsv")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "synthetic %d\n", len(b))
		h.Write(b)
		exs = append(exs, syntheticExamples(t)...)
	}
	if cfg.Tables {
		// The tables are Go source: their phrases go into the digest.
		for _, l := range controlLists {
			fmt.Fprintf(h, "table %s %s %s\n", l.lang, l.kind, l.words)
		}
		exs = append(exs, tableExamples()...)
	}
	return exs, "sha256:" + hex.EncodeToString(h.Sum(nil)), len(rows)
}

// rng is xorshift64*: a generator whose sequence no library change can alter.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

// train fits a multinomial logistic regression to exs by AdaGrad and
// quantizes it to one byte per weight.
func train(cfg trainConfig, exs []example) *model {
	c := len(modelClasses)
	buckets := 1<<cfg.Bits + 1<<cfg.Fixed
	w := make([]float64, buckets*c)
	g2 := make([]float64, buckets*c) // AdaGrad's sums of squared gradients
	bias := make([]float64, c)
	bg2 := make([]float64, c)
	order := make([]int, len(exs))
	for i := range order {
		order[i] = i
	}
	r := rng(0x9e3779b97f4a7c15)
	z := make([]float64, c)
	for range cfg.Epochs {
		for i := len(order) - 1; i > 0; i-- {
			j := int(r.next() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		for _, i := range order {
			ex := &exs[i]
			vc, vw := ex.weights()
			cw := 1.0
			if cfg.Weight > 0 && ex.class > 0 && askFirst(Kind(modelClasses[ex.class])) {
				cw = cfg.Weight
			}
			copy(z, bias)
			for k, f := range ex.h {
				v := value(k, &ex.featureSet, vc, vw)
				b, neg := bucket(cfg.Bits, cfg.Fixed, &ex.featureSet, k, f)
				if neg {
					v = -v
				}
				row := w[b*c:][:c]
				for j := range c {
					z[j] += float64(row[j] * v)
				}
			}
			top := z[0]
			for _, v := range z {
				top = max(top, v)
			}
			sum := 0.0
			for j := range c {
				z[j] = expDet(z[j] - top)
				sum += z[j]
			}
			for j := range c {
				z[j] /= sum // the probability
				if j == ex.class {
					z[j]-- // the gradient of the loss in the logit
				}
				z[j] = float64(z[j] * cw)
				bg2[j] += float64(z[j] * z[j])
				bias[j] -= float64(cfg.Rate*z[j]) / (math.Sqrt(bg2[j]) + 1e-9)
			}
			for k, f := range ex.h {
				v := value(k, &ex.featureSet, vc, vw)
				b, neg := bucket(cfg.Bits, cfg.Fixed, &ex.featureSet, k, f)
				if neg {
					v = -v
				}
				b *= c
				for j := range c {
					gr := float64(z[j]*v) + float64(cfg.L2*w[b+j])
					g2[b+j] += float64(gr * gr)
					w[b+j] -= float64(cfg.Rate*gr) / (math.Sqrt(g2[b+j]) + 1e-9)
				}
			}
		}
	}
	m := &model{modelHeader: modelHeader{Bits: cfg.Bits, Fixed: cfg.Fixed, Classes: modelClasses, Scale: make([]float64, c), Bias: bias}}
	for j := range c {
		top := 0.0
		for b := j; b < len(w); b += c {
			top = max(top, math.Abs(w[b]))
		}
		m.Scale[j] = top
		if top == 0 {
			m.Scale[j] = 1
		}
	}
	m.codes = make([]int8, len(w))
	m.w = make([]float32, len(w))
	for i, x := range w {
		q := code(x, m.Scale[i%c])
		m.codes[i] = q
		v := codebook[max(q, -q)] * m.Scale[i%c]
		if q < 0 {
			v = -v
		}
		m.w[i] = float32(v)
	}
	for _, name := range modelClasses {
		k := Kind(name)
		if name == "none" {
			k = ""
		}
		m.kinds = append(m.kinds, k)
	}
	return m
}

// value is the value of the k-th feature of f, whose first two groups
// have the values vc and vw.
func value(k int, f *featureSet, vc, vw float64) float64 {
	switch {
	case k < f.chars:
		return vc
	case k < f.chars+f.word:
		return vw
	}
	return 1
}

// encode writes m as a model file.
func (m *model) encode() []byte {
	var b bytes.Buffer
	b.WriteString(modelMagic)
	h, err := json.Marshal(m.modelHeader)
	if err != nil {
		panic(err)
	}
	b.Write(h)
	b.WriteByte('\n')
	for _, q := range m.codes {
		b.WriteByte(byte(q))
	}
	return b.Bytes()
}

// trainModel trains the model of the given training apps with cfg.
func trainModel(t testing.TB, cfg trainConfig, apps []string) *model {
	exs, digest, rows := trainingSet(t, cfg, apps)
	m := train(cfg, exs)
	m.Corpus, m.Rows, m.Apps = digest, rows, len(apps)
	return m
}

func TestModelIsTrainedFromTheCorpus(t *testing.T) {
	m := trainModel(t, trainSettings, trainingApps(t))
	got := m.encode()
	if os.Getenv("UPDATE_MODEL") != "" {
		if err := os.WriteFile("model.bin", got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote model.bin: %d bytes, %d rows of %d training apps, %s", len(got), m.Rows, m.Apps, m.Corpus)
		return
	}
	if !bytes.Equal(got, modelFile) {
		committed, err := parseModel(modelFile)
		why := "its weights differ"
		if err != nil {
			why = err.Error()
		} else if committed.Corpus != m.Corpus {
			why = fmt.Sprintf("it was trained on %s (%d rows, %d apps), the corpus is now %s (%d rows, %d apps)",
				committed.Corpus, committed.Rows, committed.Apps, m.Corpus, m.Rows, m.Apps)
		}
		t.Fatalf("model.bin is not what the trainer makes from the committed corpus: %s; run make commit-model", why)
	}
}

func TestTrainingIsDeterministic(t *testing.T) {
	exs := tableExamples()
	cfg := trainConfig{Bits: 12, Fixed: 8, Epochs: 2, Rate: 0.2, L2: 1e-4}
	a, b := train(cfg, exs).encode(), train(cfg, exs).encode()
	if !bytes.Equal(a, b) {
		t.Fatal("two trainings on the same examples made different weights")
	}
}

func TestExpDet(t *testing.T) {
	for _, x := range []float64{-50, -10, -1, -0.3, 0, 1e-9, 0.5, 1, 3.3, 20, 100} {
		if got, want := expDet(x), math.Exp(x); math.Abs(got-want) > 1e-13*want {
			t.Errorf("expDet(%v): got %v; want %v", x, got, want)
		}
	}
	if got := expDet(-800); got != 0 {
		t.Errorf("expDet(-800): got %v; want 0", got)
	}
}
