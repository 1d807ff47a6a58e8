package main

// The template engine, mirroring Helm 3.16's pkg/engine (engine.go,
// funcs.go, files.go) and the manifest ordering of pkg/releaseutil.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig" // Debian GOPATH path of sprig/v3
	"github.com/ghodss/yaml"
	"github.com/gobwas/glob"
)

// funcMap is engine.funcMap: sprig without env/expandenv, plus Helm's own.
// include, tpl, required and fail are bound per render in render().
func funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	fromYAML, fromYAMLArray := fromDoc(func(b []byte, v interface{}) error { return yaml.Unmarshal(b, v) })
	fromJSON, fromJSONArray := fromDoc(json.Unmarshal)
	extra := template.FuncMap{
		"toToml":        toTOML,
		"toYaml":        toYAML,
		"fromYaml":      fromYAML,
		"fromYamlArray": fromYAMLArray,
		"toJson":        toJSON,
		"fromJson":      fromJSON,
		"fromJsonArray": fromJSONArray,
		// helm template has no cluster: lookup always finds nothing.
		"lookup": func(string, string, string, string) (map[string]interface{}, error) {
			return map[string]interface{}{}, nil
		},
		// Helm disables DNS lookups unless --enable-dns is given.
		"getHostByName": func(string) string { return "" },
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

// toYAML marshals like sigs.k8s.io/yaml (sorted keys) and drops the final
// newline; like toJson and toToml it swallows errors inside templates.
func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func toTOML(v interface{}) string {
	b := bytes.NewBuffer(nil)
	if err := toml.NewEncoder(b).Encode(v); err != nil {
		return err.Error()
	}
	return b.String()
}

// fromDoc builds fromYaml/fromJson (a parse error lands in m["Error"]) and
// fromYamlArray/fromJsonArray (the error is the only item), as in Helm.
func fromDoc(unmarshal func([]byte, interface{}) error) (func(string) map[string]interface{}, func(string) []interface{}) {
	toMap := func(str string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := unmarshal([]byte(str), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	toArray := func(str string) []interface{} {
		a := []interface{}{}
		if err := unmarshal([]byte(str), &a); err != nil {
			a = []interface{}{err.Error()}
		}
		return a
	}
	return toMap, toArray
}

// files is engine.files: .Files.Get, GetBytes, Glob, AsConfig, AsSecrets, Lines.
type files map[string][]byte

func (f files) GetBytes(name string) []byte {
	if v, ok := f[name]; ok {
		return v
	}
	return []byte{}
}

func (f files) Get(name string) string { return string(f.GetBytes(name)) }

// Glob uses gobwas/glob with '/' as separator, like Helm: `*` stays within a
// directory, `**` crosses directories.
func (f files) Glob(pattern string) files {
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		g, _ = glob.Compile("**")
	}
	nf := files{}
	for name, contents := range f {
		if g.Match(name) {
			nf[name] = contents
		}
	}
	return nf
}

func (f files) AsConfig() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for k, v := range f {
		m[path.Base(k)] = string(v)
	}
	return toYAML(m)
}

func (f files) AsSecrets() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for k, v := range f {
		m[path.Base(k)] = base64.StdEncoding.EncodeToString(v)
	}
	return toYAML(m)
}

func (f files) Lines(p string) []string {
	if f == nil || len(f[p]) == 0 {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(string(f[p]), "\n"), "\n")
}

const recursionMaxNums = 1000

// required/fail messages are wrapped so the final error can show just them.
var warnRegex = regexp.MustCompile(`HELM_ERR_START((?s).*)HELM_ERR_END`)

func warnWrap(warn string) string { return "HELM_ERR_START" + warn + "HELM_ERR_END" }

func includeFun(t *template.Template, includedNames map[string]int) func(string, interface{}) (string, error) {
	return func(name string, data interface{}) (string, error) {
		var buf strings.Builder
		if includedNames[name] > recursionMaxNums {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
		}
		includedNames[name]++
		err := t.ExecuteTemplate(&buf, name, data)
		includedNames[name]--
		return buf.String(), err
	}
}

// tplFun renders a string as a template that sees every define of the chart.
func tplFun(parent *template.Template, includedNames map[string]int) func(string, interface{}) (string, error) {
	return func(tpl string, vals interface{}) (string, error) {
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		t.Option("missingkey=zero") // Clone drops it (golang/go#43022)
		t.Funcs(template.FuncMap{
			"include": includeFun(t, includedNames),
			"tpl":     tplFun(t, includedNames),
		})
		t, err = t.New(parent.Name()).Parse(tpl)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", tpl, err)
		}
		var buf strings.Builder
		if err := t.Execute(&buf, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", tpl, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
}

// engine renders one chart. In lintMode `required` and `fail` only log.
type engine struct {
	lintMode bool
	infos    []string
}

// render parses every template (partials included) into one template set and
// executes the non-partials. tpls maps full names (CHART/templates/x.yaml) to
// sources; top is the .Values/.Chart/.Release/... map.
func (e *engine) render(tpls map[string]string, top map[string]interface{}, basePath string) (rendered map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering template failed: %v", r)
		}
	}()
	t := template.New("gotpl")
	// missingkey=zero still prints "<no value>" for maps of interface{};
	// Helm strips that from the output below.
	t.Option("missingkey=zero")
	fm := funcMap()
	includedNames := map[string]int{}
	fm["include"] = includeFun(t, includedNames)
	fm["tpl"] = tplFun(t, includedNames)
	fm["required"] = func(warn string, val interface{}) (interface{}, error) {
		if s, isString := val.(string); val == nil || (isString && s == "") {
			if e.lintMode {
				e.infos = append(e.infos, "Missing required value: "+warn)
				return "", nil
			}
			return val, errors.New(warnWrap(warn))
		}
		return val, nil
	}
	fm["fail"] = func(msg string) (string, error) {
		if e.lintMode {
			e.infos = append(e.infos, "fail: "+msg)
			return "", nil
		}
		return "", errors.New(warnWrap(msg))
	}
	t.Funcs(fm)

	keys := sortTemplates(tpls)
	for _, name := range keys {
		if _, err := t.New(name).Parse(tpls[name]); err != nil {
			return nil, cleanupParseError(name, err)
		}
	}
	rendered = map[string]string{}
	for _, name := range keys {
		if strings.HasPrefix(path.Base(name), "_") {
			continue // partials are only there to be included
		}
		top["Template"] = map[string]interface{}{"Name": name, "BasePath": basePath}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, cleanupExecError(name, err)
		}
		rendered[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return rendered, nil
}

// sortTemplates orders deeper paths first, then lexically (Helm's byPathLen
// reversed): later definitions of the same `define` win.
func sortTemplates(tpls map[string]string) []string {
	keys := make([]string, 0, len(tpls))
	for k := range tpls {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ci, cj := strings.Count(keys[i], "/"), strings.Count(keys[j], "/")
		if ci == cj {
			return keys[i] > keys[j]
		}
		return ci > cj
	})
	return keys
}

func cleanupParseError(filename string, err error) error {
	tokens := strings.Split(err.Error(), ": ")
	if len(tokens) == 1 {
		return fmt.Errorf("parse error in (%s): %s", filename, err)
	}
	return fmt.Errorf("parse error at (%s): %s", tokens[1], tokens[len(tokens)-1])
}

// cleanupExecError turns a required/fail error into Helm's
// "execution error at (chart/templates/x.yaml:3:4): message".
func cleanupExecError(filename string, err error) error {
	if _, isExecError := err.(template.ExecError); !isExecError {
		return err
	}
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return fmt.Errorf("execution error in (%s): %s", filename, err)
	}
	if parts := warnRegex.FindStringSubmatch(tokens[2]); len(parts) >= 2 {
		return fmt.Errorf("execution error at (%s): %s", tokens[1], parts[1])
	}
	return err
}

// manifest is one YAML document of a rendered template.
type manifest struct {
	Path    string
	Content string
	Head    simpleHead
}

type simpleHead struct {
	Version  string `json:"apiVersion"`
	Kind     string `json:"kind,omitempty"`
	Metadata *struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata,omitempty"`
}

var docSep = regexp.MustCompile("(?:^|\\s*\n)---\\s*")

// splitManifests is releaseutil.SplitManifests, keeping document order.
func splitManifests(bigFile string) []string {
	var res []string
	for _, d := range docSep.Split(strings.TrimSpace(bigFile), -1) {
		if d = strings.TrimSpace(d); d != "" {
			res = append(res, d)
		}
	}
	return res
}

var hookEvents = map[string]bool{
	"pre-install": true, "post-install": true, "pre-delete": true, "post-delete": true,
	"pre-upgrade": true, "post-upgrade": true, "pre-rollback": true, "post-rollback": true,
	"test": true, "test-success": true,
}

// sortManifests is releaseutil.SortManifests with InstallOrder: documents
// split per file (files in path order), hooks separated out (unknown hook
// types dropped), both sorted stably by kind.
func sortManifests(rendered map[string]string) (generic, hooks []manifest, err error) {
	paths := make([]string, 0, len(rendered))
	for p := range rendered {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if strings.HasPrefix(path.Base(p), "_") || strings.TrimSpace(rendered[p]) == "" {
			continue
		}
		for _, doc := range splitManifests(rendered[p]) {
			m := manifest{Path: p, Content: doc}
			if err := yaml.Unmarshal([]byte(doc), &m.Head); err != nil {
				return nil, nil, fmt.Errorf("YAML parse error on %s: %w", p, err)
			}
			hookTypes, isHook := "", false
			if m.Head.Metadata != nil {
				hookTypes, isHook = m.Head.Metadata.Annotations["helm.sh/hook"]
			}
			if !isHook {
				generic = append(generic, m)
				continue
			}
			known := true
			for _, h := range strings.Split(hookTypes, ",") {
				known = known && hookEvents[strings.ToLower(strings.TrimSpace(h))]
			}
			if known {
				hooks = append(hooks, m)
			} else {
				warn("info: skipping unknown hook: %q", hookTypes)
			}
		}
	}
	return sortByKind(generic), sortByKind(hooks), nil
}

var installOrder = strings.Fields(`PriorityClass Namespace NetworkPolicy ResourceQuota
LimitRange PodSecurityPolicy PodDisruptionBudget ServiceAccount Secret SecretList ConfigMap
StorageClass PersistentVolume PersistentVolumeClaim CustomResourceDefinition ClusterRole
ClusterRoleList ClusterRoleBinding ClusterRoleBindingList Role RoleList RoleBinding
RoleBindingList Service DaemonSet Pod ReplicationController ReplicaSet Deployment
HorizontalPodAutoscaler StatefulSet Job CronJob IngressClass Ingress APIService`)

// sortByKind: known kinds in install order, unknown kinds after them, sorted
// by kind name; the sort is stable, so documents of one kind keep file order.
func sortByKind(ms []manifest) []manifest {
	rank := map[string]int{}
	for i, k := range installOrder {
		rank[k] = i
	}
	sort.SliceStable(ms, func(i, j int) bool {
		a, aok := rank[ms[i].Head.Kind]
		b, bok := rank[ms[j].Head.Kind]
		switch {
		case !aok && !bok:
			return ms[i].Head.Kind < ms[j].Head.Kind
		case !aok:
			return false
		case !bok:
			return true
		}
		return a < b
	})
	return ms
}
