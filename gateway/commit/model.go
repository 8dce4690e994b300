package commit

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
)

// The learned model: a multinomial logistic regression over hashed
// features of a control (features.go), trained on the real-app corpus's
// training apps by `make commit-model` (train_test.go). Its weights are
// in model.bin, one signed byte per feature bucket and class: a µ-law code
// (see codebook) times the class's scale, so that the many small weights
// keep their precision next to the few large ones.

//go:embed model.bin
var modelFile []byte

// modelMagic is the first line of a model file.
const modelMagic = "pinky commit model 1\n"

// modelHeader is the model file's second line.
type modelHeader struct {
	Bits    uint      `json:"bits"`    // log2 of the number of the text's feature buckets
	Fixed   uint      `json:"fixed"`   // log2 of the number of the fixed features' buckets
	Classes []string  `json:"classes"` // "none" and the kinds, in the order of the weights
	Scale   []float64 `json:"scale"`   // per class: weight = ±codebook[|byte|] × scale
	Bias    []float64 `json:"bias"`    // per class
	// Corpus is the SHA-256 of what the model was trained on (the
	// training apps' rows and the trainer's settings), Rows and Apps
	// how much of it there was.
	Corpus string `json:"corpus"`
	Rows   int    `json:"rows"`
	Apps   int    `json:"apps"`
}

// model is a loaded model.
type model struct {
	modelHeader
	kinds []Kind    // per class, "" for none
	w     []float32 // bucket-major: w[bucket*len(kinds)+class]
	codes []int8    // the trainer's: w's codes, for the file
}

// codeMu is the µ of the weights' µ-law codes.
const codeMu = 255

// codebook maps a weight's code, 0 to 127, to its size relative to its
// class's scale: ((1+µ)^(q/127) − 1) / µ, from 0 to 1. It is computed
// with expDet, so that the trainer picks the same codes on every machine.
var codebook = func() (t [128]float64) {
	ln := math.Log1p(codeMu) // only scales x below: the codes need not be exact, only the same in trainer and reader
	for q := range t {
		t[q] = (expDet(float64(q)/127*ln) - 1) / codeMu
	}
	return t
}()

// code is the µ-law code of w/scale (the nearest of the codebook).
func code(w, scale float64) int8 {
	x := math.Abs(w) / scale
	lo, hi := 0, 127
	for lo < hi { // the smallest code at or above x
		mid := (lo + hi) / 2
		if codebook[mid] < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo > 0 && x-codebook[lo-1] <= codebook[lo]-x {
		lo--
	}
	if w < 0 {
		return int8(-lo)
	}
	return int8(lo)
}

// expDet is e^x computed the same way on every machine (math.Exp may use
// the CPU's fused instructions): x = k·ln 2 + r with |r| ≤ ln 2 / 2, and
// e^r by its Taylor series, every product rounded on its own.
func expDet(x float64) float64 {
	switch {
	case x < -700:
		return 0
	case x > 700:
		x = 700
	}
	const ln2 = 0.6931471805599453
	k := math.Round(x / ln2)
	r := x - float64(k*ln2)
	sum, term := 1.0, 1.0
	for i := 1; i <= 16; i++ {
		term = float64(term*r) / float64(i)
		sum += term
	}
	return math.Ldexp(sum, int(k))
}

// bucket is the row of weights of the k-th feature of f, hashed h, in a
// model whose text features have 2^bits buckets and fixed ones 2^fixed
// after them, and whether the feature counts negated. The few fixed
// features have buckets of their own, so that the role or the app's class
// never shares its weights with a character n-gram; the text's features
// share theirs, and a sign from the hash makes a collision add noise
// rather than a bias.
func bucket(bits, fixed uint, f *featureSet, k int, h uint32) (row int, neg bool) {
	if k >= f.chars+f.word {
		return 1<<bits + int(h&(1<<fixed-1)), false
	}
	return int(h & (1<<bits - 1)), h>>31 == 1
}

// maxClasses bounds the number of classes a model may have.
const maxClasses = 16

// loadedModel is the embedded model, read on first use.
var loadedModel = sync.OnceValues(func() (*model, error) { return parseModel(modelFile) })

// defaultModel is the embedded model; a broken one is a build defect that
// TestModelLoads catches, so Detect goes on with the word tables alone.
func defaultModel() *model {
	m, err := loadedModel()
	if err != nil {
		return nil
	}
	return m
}

// parseModel reads a model file.
func parseModel(b []byte) (*model, error) {
	rest, ok := bytes.CutPrefix(b, []byte(modelMagic))
	if !ok {
		return nil, errors.New("commit model: not a model file")
	}
	line, w, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, errors.New("commit model: no header")
	}
	m := &model{}
	if err := json.Unmarshal(line, &m.modelHeader); err != nil {
		return nil, fmt.Errorf("commit model: header: %w", err)
	}
	c := len(m.Classes)
	if c < 2 || c > maxClasses || len(m.Scale) != c || len(m.Bias) != c || m.Bits < 8 || m.Bits > 24 || m.Fixed < 4 || m.Fixed > 16 {
		return nil, errors.New("commit model: bad header")
	}
	if len(w) != c*(1<<m.Bits+1<<m.Fixed) {
		return nil, fmt.Errorf("commit model: got %d weights; want %d", len(w), c*(1<<m.Bits+1<<m.Fixed))
	}
	for _, name := range m.Classes {
		k := Kind(name)
		if name == "none" {
			k = ""
		} else if _, ok := rank[k]; !ok || rank[k] >= len(Kinds) {
			return nil, fmt.Errorf("commit model: unknown class %q", name)
		}
		m.kinds = append(m.kinds, k)
	}
	m.w = make([]float32, len(w))
	for i, x := range w {
		q := int8(x)
		if q == -128 {
			return nil, errors.New("commit model: a weight's code is -128")
		}
		v := codebook[max(q, -q)] * m.Scale[i%c]
		if q < 0 {
			v = -v
		}
		m.w[i] = float32(v)
	}
	return m, nil
}

// logits writes into z (one per class) the model's score of each class
// given the features.
func (m *model) logits(f *featureSet, z []float64) {
	c := len(m.kinds)
	var acc [3][maxClasses]float32 // per group of features
	for k, h := range f.h {
		g := 2
		switch {
		case k < f.chars:
			g = 0
		case k < f.chars+f.word:
			g = 1
		}
		b, neg := bucket(m.Bits, m.Fixed, f, k, h)
		row := m.w[b*c:][:c]
		a := &acc[g]
		if neg {
			for j, x := range row {
				a[j] -= x
			}
			continue
		}
		for j, x := range row {
			a[j] += x
		}
	}
	vc, vw := f.weights()
	for j := range c {
		z[j] = float64(acc[0][j])*vc + float64(acc[1][j])*vw + float64(acc[2][j]) + m.Bias[j]
	}
}

// softmax turns scores into probabilities, in place.
func softmax(z []float64) {
	top := math.Inf(-1)
	for _, v := range z {
		top = max(top, v)
	}
	sum := 0.0
	for j := range z {
		z[j] = math.Exp(z[j] - top)
		sum += z[j]
	}
	for j := range z {
		z[j] /= sum
	}
}
