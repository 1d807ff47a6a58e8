package main

// Chart loading, values and capabilities, mirroring Helm 3.16's
// pkg/chart/loader, pkg/chartutil (coalesce.go, values.go, jsonschema.go,
// capabilities.go) and pkg/cli/values for a single chart without subcharts.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/Masterminds/semver" // Debian GOPATH path of semver/v3
	"github.com/ghodss/yaml"        // the same YAML↔JSON bridge as sigs.k8s.io/yaml, which it was forked into
	"github.com/xeipuuv/gojsonschema"
)

// chartMeta is Helm's chart.Metadata: the JSON tags read Chart.yaml, the Go
// field names are what templates see as .Chart.Name, .Chart.AppVersion, ...
type chartMeta struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Maintainers  []*maintainer     `json:"maintainers,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Dependencies []*dependency     `json:"dependencies,omitempty"`
	Type         string            `json:"type,omitempty"`
}

type maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

type dependency struct {
	Name         string        `json:"name"`
	Version      string        `json:"version,omitempty"`
	Repository   string        `json:"repository"`
	Condition    string        `json:"condition,omitempty"`
	Tags         []string      `json:"tags,omitempty"`
	Enabled      bool          `json:"enabled,omitempty"`
	ImportValues []interface{} `json:"import-values,omitempty"`
	Alias        string        `json:"alias,omitempty"`
}

var utf8bom = []byte{0xEF, 0xBB, 0xBF} // Helm's loader drops a leading BOM from every file

type chart struct {
	Meta      chartMeta
	Values    map[string]interface{}
	Schema    []byte
	Templates map[string]string // "templates/x.yaml" → source
	Files     files             // every other file, as .Files sees them
}

// loadChart reads a chart directory the way Helm's directory loader does:
// Chart.yaml, values.yaml, values.schema.json, templates/**, and everything
// else (minus charts/ and .helmignore matches) as .Files.
func loadChart(dir string) (*chart, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, errors.New("Chart.yaml file is missing")
	}
	c := &chart{Values: map[string]interface{}{}, Templates: map[string]string{}, Files: files{}}
	if err := yaml.Unmarshal(bytes.TrimPrefix(raw, utf8bom), &c.Meta); err != nil {
		return nil, fmt.Errorf("cannot load Chart.yaml: %w", err)
	}
	ignore := readHelmignore(dir)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if ignore.ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data = bytes.TrimPrefix(data, utf8bom)
		switch {
		case rel == "Chart.yaml", rel == "Chart.lock", rel == "requirements.lock":
		case rel == "values.yaml":
			if err := yaml.Unmarshal(data, &c.Values); err != nil {
				return fmt.Errorf("cannot load values.yaml: %w", err)
			}
		case rel == "values.schema.json":
			c.Schema = data
		case strings.HasPrefix(rel, "templates/"):
			c.Templates[rel] = string(data)
		case strings.HasPrefix(rel, "charts/"):
			// Subcharts are not supported; their files are not the parent's .Files.
		default:
			c.Files[rel] = data
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.Values == nil {
		c.Values = map[string]interface{}{}
	}
	return c, validateMeta(&c.Meta)
}

// validateMeta is chart.Metadata.Validate, which every Helm load runs.
func validateMeta(md *chartMeta) error {
	switch {
	case md.APIVersion == "":
		return errors.New("validation: chart.metadata.apiVersion is required")
	case md.Name == "":
		return errors.New("validation: chart.metadata.name is required")
	case md.Name != filepath.Base(md.Name):
		return fmt.Errorf("validation: chart.metadata.name %q is invalid", md.Name)
	case md.Version == "":
		return errors.New("validation: chart.metadata.version is required")
	case !isSemver(md.Version):
		return fmt.Errorf("validation: chart.metadata.version %q is invalid", md.Version)
	case md.Type != "" && md.Type != "application" && md.Type != "library":
		return errors.New("validation: chart.metadata.type must be application or library")
	}
	return nil
}

func isSemver(v string) bool {
	_, err := semver.NewVersion(v)
	return err == nil
}

// helmignore is a small subset of Helm's pkg/ignore: one glob per line,
// `#` comments, `!` is not supported, a trailing `/` matches directories only,
// a pattern without `/` matches the base name at any depth. Like Helm, hidden
// files directly under templates/ are always ignored.
type helmignore []string

func readHelmignore(dir string) helmignore {
	rules := helmignore{"templates/.?*"}
	data, err := os.ReadFile(filepath.Join(dir, ".helmignore"))
	if err != nil {
		return rules
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "!") {
			rules = append(rules, line)
		}
	}
	return rules
}

func (h helmignore) ignored(rel string, isDir bool) bool {
	for _, rule := range h {
		if strings.HasSuffix(rule, "/") {
			if !isDir {
				continue
			}
			rule = strings.TrimSuffix(rule, "/")
		}
		target := rel
		if !strings.Contains(strings.TrimPrefix(rule, "/"), "/") {
			target = path.Base(rel)
		}
		if ok, _ := path.Match(strings.TrimPrefix(rule, "/"), target); ok {
			return true
		}
	}
	return false
}

// readValuesFile is chartutil.ReadValuesFile (sigs.k8s.io/yaml: numbers
// become float64, exactly as in Helm).
func readValuesFile(name string) (map[string]interface{}, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("failed to parse %s: %w", name, err)
	}
	if m == nil {
		m = map[string]interface{}{}
	}
	return m, nil
}

// userValues is values.Options.MergeValues: -f files merged in order, then
// each --set and --set-string parsed into the result.
func userValues(o *options) (map[string]interface{}, error) {
	base := map[string]interface{}{}
	for _, f := range o.valueFiles {
		m, err := readValuesFile(f)
		if err != nil {
			return nil, err
		}
		base = mergeMaps(base, m)
	}
	for _, s := range o.set {
		if err := parseSetInto(s, base, false); err != nil {
			return nil, fmt.Errorf("failed parsing --set data: %w", err)
		}
	}
	for _, s := range o.setString {
		if err := parseSetInto(s, base, true); err != nil {
			return nil, fmt.Errorf("failed parsing --set-string data: %w", err)
		}
	}
	return base, nil
}

func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]interface{}); ok {
			if bv, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeMaps(bv, v)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// coalesceValues is chartutil.CoalesceValues for the root chart: user values
// win over the chart's values.yaml, and a user `null` deletes a default.
func coalesceValues(defaults, user map[string]interface{}) map[string]interface{} {
	v := deepCopy(user).(map[string]interface{})
	for key, val := range deepCopy(defaults).(map[string]interface{}) {
		value, ok := v[key]
		switch {
		case !ok:
			v[key] = val
		case value == nil:
			delete(v, key)
		case isTable(value):
			if src, ok := val.(map[string]interface{}); ok {
				coalesceTables(value.(map[string]interface{}), src, key)
			} else if val != nil {
				warn("warning: skipped value for %s: Not a table.", key)
			}
		}
	}
	return v
}

func coalesceTables(dst, src map[string]interface{}, prefix string) {
	for key, val := range src {
		fullkey := prefix + "." + key
		dv, ok := dst[key]
		switch {
		case ok && dv == nil:
			delete(dst, key)
		case !ok:
			dst[key] = val
		case isTable(val):
			if isTable(dv) {
				coalesceTables(dv.(map[string]interface{}), val.(map[string]interface{}), fullkey)
			} else {
				warn("warning: cannot overwrite table with non table for %s (%v)", fullkey, val)
			}
		case isTable(dv) && val != nil:
			warn("warning: destination for %s is a table. Ignoring non-table value (%v)", fullkey, val)
		}
	}
}

func isTable(v interface{}) bool {
	_, ok := v.(map[string]interface{})
	return ok
}

func deepCopy(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []interface{}:
		l := make([]interface{}, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

func warn(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// validateSchema is chartutil.ValidateAgainstSchema. Helm 3 (up to 3.17)
// used xeipuuv/gojsonschema, which Debian packages, so messages match.
// gojsonschema knows drafts 4/6/7; a 2020-12 $schema falls back to its
// hybrid mode, which covers the common keywords ($ref to #/$defs included).
func validateSchema(c *chart, vals map[string]interface{}) error {
	if c.Schema == nil {
		return nil
	}
	valuesJSON, err := json.Marshal(vals)
	if err != nil {
		return err
	}
	if string(valuesJSON) == "null" {
		valuesJSON = []byte("{}")
	}
	result, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(c.Schema), gojsonschema.NewBytesLoader(valuesJSON))
	if err != nil {
		return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n%s", c.Meta.Name, err)
	}
	if result.Valid() {
		return nil
	}
	var sb strings.Builder
	for _, desc := range result.Errors() {
		fmt.Fprintf(&sb, "- %s\n", desc)
	}
	return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n%s", c.Meta.Name, sb.String())
}

// capabilities is chartutil.Capabilities.
type capabilities struct {
	KubeVersion kubeVersion
	APIVersions versionSet
	HelmVersion helmVersion
}

type kubeVersion struct {
	Version string // e.g. v1.31.0
	Major   string
	Minor   string
}

func (kv *kubeVersion) String() string     { return kv.Version }
func (kv *kubeVersion) GitVersion() string { return kv.Version }

type helmVersion struct {
	Version      string `json:"version,omitempty"`
	GitCommit    string `json:"git_commit,omitempty"`
	GitTreeState string `json:"git_tree_state,omitempty"`
	GoVersion    string `json:"go_version,omitempty"`
}

// versionSet.Has matches exact strings: "group/version" or, when passed
// with --api-versions, "group/version/Kind".
type versionSet []string

func (v versionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	return false
}

// defaultAPIVersions approximates what a Helm 3.16 binary (client-go 1.31)
// reports without a cluster: the built-in group/versions of its scheme.
var defaultAPIVersions = strings.Fields(`v1
admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1beta1 admissionregistration.k8s.io/v1alpha1
internal.apiserver.k8s.io/v1alpha1 apps/v1 apps/v1beta2 apps/v1beta1
authentication.k8s.io/v1 authentication.k8s.io/v1beta1 authentication.k8s.io/v1alpha1
authorization.k8s.io/v1 authorization.k8s.io/v1beta1
autoscaling/v1 autoscaling/v2 autoscaling/v2beta2 autoscaling/v2beta1 batch/v1 batch/v1beta1
certificates.k8s.io/v1 certificates.k8s.io/v1beta1 certificates.k8s.io/v1alpha1
coordination.k8s.io/v1 coordination.k8s.io/v1beta1 coordination.k8s.io/v1alpha1
discovery.k8s.io/v1 discovery.k8s.io/v1beta1 events.k8s.io/v1 events.k8s.io/v1beta1 extensions/v1beta1
flowcontrol.apiserver.k8s.io/v1 flowcontrol.apiserver.k8s.io/v1beta3 flowcontrol.apiserver.k8s.io/v1beta2 flowcontrol.apiserver.k8s.io/v1beta1
networking.k8s.io/v1 networking.k8s.io/v1beta1 networking.k8s.io/v1alpha1
node.k8s.io/v1 node.k8s.io/v1beta1 node.k8s.io/v1alpha1 policy/v1 policy/v1beta1
rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1beta1 rbac.authorization.k8s.io/v1alpha1
resource.k8s.io/v1alpha3 scheduling.k8s.io/v1 scheduling.k8s.io/v1beta1 scheduling.k8s.io/v1alpha1
storage.k8s.io/v1 storage.k8s.io/v1beta1 storage.k8s.io/v1alpha1 storagemigration.k8s.io/v1alpha1
apiextensions.k8s.io/v1 apiextensions.k8s.io/v1beta1`)

// newCapabilities is chartutil.ParseKubeVersion plus the --api-versions list.
func newCapabilities(kube string, extra []string) (*capabilities, error) {
	sv, err := semver.NewVersion(kube)
	if err != nil {
		return nil, fmt.Errorf("invalid kube version '%s': %s", kube, err)
	}
	vs := append(append(versionSet{}, defaultAPIVersions...), extra...)
	return &capabilities{
		KubeVersion: kubeVersion{
			Version: "v" + sv.String(),
			Major:   strconv.FormatUint(sv.Major(), 10),
			Minor:   strconv.FormatUint(sv.Minor(), 10),
		},
		APIVersions: vs,
		HelmVersion: helmVersion{Version: "v3.16.4", GitTreeState: "clean", GoVersion: "helm-render"},
	}, nil
}

// checkKubeVersion is Helm's chart kubeVersion constraint check.
func checkKubeVersion(c *chart, caps *capabilities) error {
	if c.Meta.KubeVersion == "" {
		return nil
	}
	constraint, err := semver.NewConstraint(c.Meta.KubeVersion)
	if err == nil {
		var v *semver.Version
		if v, err = semver.NewVersion(caps.KubeVersion.Version); err == nil && constraint.Check(v) {
			return nil
		}
	}
	return fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", c.Meta.KubeVersion, caps.KubeVersion.Version)
}
