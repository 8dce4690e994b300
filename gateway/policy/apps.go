package policy

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"sync"

	"gopkg.in/yaml.v3"
)

// bundledApps is the app table Pinky ships: well-known apps' Android
// package ids and iOS bundle ids by category. The person's apps.yaml, in
// the same format, is merged over it.
//
//go:embed apps.yaml
var bundledApps []byte

var appKeys = []string{"name", "android", "ios", "id"}

// parseApps parses an app table file and merges it over base (which it
// does not change): an id in the file takes the file's category, and the
// category none takes an app out of every category.
func parseApps(file string, data []byte, base map[string]string) (map[string]string, []*Error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlErrors(file, data, err)
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		return out, nil // empty
	}
	var errs []*Error
	bad := func(line int, format string, args ...any) {
		errs = append(errs, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		bad(root.Line, "want categories as keys, each with a list of apps, e.g. banking: [{name: My Bank, android: com.mybank.app}]")
		return nil, errs
	}
	type filed struct {
		category string
		line     int
	}
	seen := map[string]filed{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		cat := k.Value
		if !known(Categories, cat) && cat != noCategory {
			bad(k.Line, "unknown category %q; want one of %s, or none", cat, oneOf(Categories))
			continue
		}
		if v.Tag == "!!null" {
			continue
		}
		if v.Kind != yaml.SequenceNode {
			bad(v.Line, "%s: want a list of apps, each like {name: My Bank, android: com.mybank.app, ios: com.mybank.ios}", cat)
			continue
		}
		for _, item := range v.Content {
			ids, ok := appIDs(item, bad)
			if !ok {
				continue
			}
			for _, id := range ids {
				if f, dup := seen[id.v]; dup && f.category != cat {
					bad(id.line, "app %s is already filed under %s at line %d", id.v, f.category, f.line)
					continue
				}
				seen[id.v] = filed{cat, id.line}
				if cat == noCategory {
					delete(out, id.v)
				} else {
					out[id.v] = cat
				}
			}
		}
	}
	if errs != nil {
		return nil, errs
	}
	return out, nil
}

// appIDs reads one app entry: a bare id, or {name, android, ios, id}.
func appIDs(item *yaml.Node, bad func(int, string, ...any)) ([]scalar, bool) {
	if item.Kind == yaml.ScalarNode && item.Value != "" {
		return []scalar{{v: item.Value, line: item.Line}}, true
	}
	if item.Kind != yaml.MappingNode {
		bad(item.Line, "want an app id or {name, android, ios, id}")
		return nil, false
	}
	var ids []scalar
	ok := true
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], item.Content[j+1]
		switch {
		case !slices.Contains(appKeys, k.Value):
			bad(k.Line, "unknown key %q in an app; want %s", k.Value, oneOf(appKeys))
			ok = false
		case v.Kind != yaml.ScalarNode || v.Value == "":
			bad(v.Line, "%s: want one value", k.Value)
			ok = false
		case k.Value != "name":
			ids = append(ids, scalar{v: v.Value, line: v.Line})
		}
	}
	if ok && len(ids) == 0 {
		bad(item.Line, "an app needs an id: android, ios or id")
		ok = false
	}
	return ids, ok
}

// bundledNames are the bundled table's names of apps, read once.
var bundledNames = sync.OnceValue(func() map[string]string { return appNames(bundledApps, nil) })

// appNames reads the names an app table file gives its apps (id → name)
// over base, which it does not change. It reads only what parseApps
// accepts, and skips the rest: the names only help to recognise an app by
// its label, where the phone gives none (Android's drivers list packages).
func appNames(data []byte, base map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return out
	}
	root := doc.Content[0]
	for i := 1; i < len(root.Content); i += 2 {
		for _, item := range root.Content[i].Content {
			if item.Kind != yaml.MappingNode {
				continue
			}
			name := ""
			var ids []string
			for j := 0; j+1 < len(item.Content); j += 2 {
				k, v := item.Content[j].Value, item.Content[j+1].Value
				switch {
				case k == "name":
					name = v
				case slices.Contains(appKeys, k) && v != "":
					ids = append(ids, v)
				}
			}
			for _, id := range ids {
				if name != "" {
					out[id] = name
				}
			}
		}
	}
	return out
}
