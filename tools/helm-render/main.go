// Command helm-render renders a Helm 3 chart like `helm template` (and checks
// it like a small `helm lint`) on machines where no helm binary can be
// installed. It uses the same engine as Helm: Go's text/template with sprig,
// plus Helm's own functions, values merging and manifest ordering.
// See README.md for what is and is not reproduced.
package main

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/ghodss/yaml"
)

const usage = `Usage: helm-render [flags] [NAME] CHART_DIR

Renders CHART_DIR like 'helm template' and prints the manifests.

Flags:
  --name NAME              release name (default "release-name"; "test-release" with --lint)
  -n, --namespace NS       release namespace (default "default")
  -f, --values FILE        values file, may be repeated (later files win)
  --set a.b=c,l[0]=x       set values like helm --set, may be repeated
  --set-string a=b         like --set, but every value stays a string
  --kube-version V         Kubernetes version for .Capabilities (default 1.31.0)
  -a, --api-versions G/V   extra API version (or G/V/Kind) for .Capabilities.APIVersions
  --notes                  print the rendered NOTES.txt after the manifests
  --debug                  on a YAML error, also print the rendered files
  --lint                   check Chart.yaml and the rendered documents instead of printing them
`

type options struct {
	name, namespace, kubeVersion, chartDir  string
	valueFiles, set, setString, apiVersions []string
	notes, lint, debug, help                bool
}

// parseArgs accepts flags before or after the positionals, as "--flag value"
// or "--flag=value", like helm's cobra flags.
func parseArgs(args []string) (*options, error) {
	o := &options{namespace: "default", kubeVersion: "1.31.0"}
	lists := map[string]*[]string{
		"-f": &o.valueFiles, "--values": &o.valueFiles, "--set": &o.set, "--set-string": &o.setString,
		"-a": &o.apiVersions, "--api-versions": &o.apiVersions,
	}
	strs := map[string]*string{"--name": &o.name, "-n": &o.namespace, "--namespace": &o.namespace, "--kube-version": &o.kubeVersion}
	bools := map[string]*bool{"--notes": &o.notes, "--lint": &o.lint, "--debug": &o.debug, "-h": &o.help, "--help": &o.help}
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		flag, value, hasValue := strings.Cut(arg, "=")
		if b, ok := bools[flag]; ok {
			*b = !hasValue || value == "true"
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: %s", flag)
			}
			i++
			value = args[i]
		}
		if l, ok := lists[flag]; ok {
			if !strings.HasPrefix(flag, "--set") {
				*l = append(*l, strings.Split(value, ",")...) // cobra StringSlice flags, as in helm
			} else {
				*l = append(*l, value)
			}
		} else if s, ok := strs[flag]; ok {
			*s = value
		} else {
			return nil, fmt.Errorf("unknown flag: %s", flag)
		}
	}
	switch len(positional) {
	case 0:
		if !o.help {
			return nil, fmt.Errorf("a chart directory is required\n\n%s", usage)
		}
	case 1:
		o.chartDir = positional[0]
	case 2: // helm template NAME CHART
		o.name, o.chartDir = positional[0], positional[1]
	default:
		return nil, fmt.Errorf("expected at most 2 arguments, got %d", len(positional))
	}
	if o.name == "" {
		o.name = "release-name"
		if o.lint {
			o.name = "test-release" // helm lint's release name
		}
	}
	return o, nil
}

func main() {
	o, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error: "+err.Error())
		os.Exit(1)
	}
	if o.help {
		fmt.Print(usage)
		return
	}
	if o.lint {
		os.Exit(runLint(o))
	}
	c, rendered, err := renderChart(o, &engine{})
	if err == nil {
		var out string
		out, err = formatTemplate(c, rendered, o)
		fmt.Print(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error: "+err.Error())
		os.Exit(1)
	}
}

// renderChart is install.go + chartutil.ToRenderValues + Engine.Render for a
// root chart: load, merge values, validate the schema, render every template.
func renderChart(o *options, e *engine) (*chart, map[string]string, error) {
	c, err := loadChart(o.chartDir)
	if err != nil {
		return nil, nil, err
	}
	if c.Meta.Type == "library" && !e.lintMode {
		return nil, nil, fmt.Errorf("library charts are not installable")
	}
	user, err := userValues(o)
	if err != nil {
		return nil, nil, err
	}
	caps, err := newCapabilities(o.kubeVersion, o.apiVersions)
	if err != nil {
		return nil, nil, err
	}
	vals := coalesceValues(c.Values, user)
	if err := validateSchema(c, vals); err != nil {
		return nil, nil, err
	}
	if err := checkKubeVersion(c, caps); err != nil && !e.lintMode { // an install check, not a lint one
		return nil, nil, err
	}
	revision := 1 // helm lint renders with bare ReleaseOptions: not an install, revision 0
	if e.lintMode {
		revision = 0
	}
	top := map[string]interface{}{
		"Chart": struct {
			chartMeta
			IsRoot bool
		}{c.Meta, true},
		"Capabilities": caps,
		"Release": map[string]interface{}{
			"Name":      o.name,
			"Namespace": o.namespace,
			"IsUpgrade": false,
			"IsInstall": !e.lintMode,
			"Revision":  revision,
			"Service":   "Helm",
		},
		"Values":    vals,
		"Files":     c.Files,
		"Subcharts": map[string]interface{}{},
	}
	tpls := map[string]string{}
	for name, src := range c.Templates {
		tpls[c.Meta.Name+"/"+name] = src
	}
	rendered, err := e.render(tpls, top, c.Meta.Name+"/templates")
	return c, rendered, err
}

// formatTemplate prints like `helm template`: manifests in install order,
// then hooks, each as "---\n# Source: path\n<doc>\n"; then, with --notes,
// the chart's NOTES.txt as `helm install` shows it.
func formatTemplate(c *chart, rendered map[string]string, o *options) (string, error) {
	notes := ""
	for name, text := range rendered {
		if strings.HasSuffix(name, "NOTES.txt") {
			if name == c.Meta.Name+"/templates/NOTES.txt" {
				notes = text
			}
			delete(rendered, name)
		}
	}
	generic, hooks, err := sortManifests(rendered)
	if err != nil {
		if !o.debug {
			return "", fmt.Errorf("%w\n\nUse --debug flag to render out invalid YAML", err)
		}
		var b strings.Builder
		for _, name := range sortedKeys(rendered) {
			if strings.TrimSpace(rendered[name]) != "" && !strings.HasPrefix(path.Base(name), "_") {
				fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, rendered[name])
			}
		}
		return b.String(), err
	}
	var b strings.Builder
	for _, m := range generic {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Path, m.Content)
	}
	out := strings.TrimSpace(b.String()) + "\n"
	for _, m := range hooks {
		out += fmt.Sprintf("---\n# Source: %s\n%s\n", m.Path, m.Content)
	}
	if o.notes && strings.TrimSpace(notes) != "" {
		out += fmt.Sprintf("NOTES:\n%s\n", strings.TrimSpace(notes))
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runLint prints helm-lint-style messages and returns the exit code. Checks:
// Chart.yaml (apiVersion v2, name, SemVer version), rendering (with `required`
// and `fail` downgraded to [INFO] as in helm lint), and that every rendered
// document parses as YAML and has apiVersion, kind and metadata.name.
func runLint(o *options) int {
	fmt.Printf("==> Linting %s\n", o.chartDir)
	failed := false
	report := func(severity, where, format string, args ...interface{}) {
		failed = failed || severity == "ERROR"
		fmt.Printf("[%s] %s: %s\n", severity, where, fmt.Sprintf(format, args...))
	}
	if lintChartfile(o.chartDir, report) {
		e := &engine{lintMode: true}
		c, rendered, err := renderChart(o, e)
		for _, info := range e.infos {
			report("INFO", "templates/", "%s", info)
		}
		if err != nil {
			report("ERROR", "templates/", "%s", err)
		}
		for _, name := range sortedKeys(rendered) {
			if strings.HasSuffix(name, "NOTES.txt") {
				continue
			}
			lintDocuments(strings.TrimPrefix(name, c.Meta.Name+"/"), rendered[name], report)
		}
	}
	fmt.Println()
	if failed {
		fmt.Fprintln(os.Stderr, "Error: 1 chart(s) linted, 1 chart(s) failed")
		return 1
	}
	fmt.Println("1 chart(s) linted, 0 chart(s) failed")
	return 0
}

type reporter func(severity, where, format string, args ...interface{})

// lintChartfile reports Chart.yaml problems with helm lint's messages and
// says whether the chart is sound enough to render.
func lintChartfile(dir string, report reporter) bool {
	raw, err := os.ReadFile(dir + "/Chart.yaml")
	if err != nil {
		report("ERROR", "Chart.yaml", "file does not exist")
		return false
	}
	var m chartMeta
	if err := yaml.Unmarshal(raw, &m); err != nil {
		report("ERROR", "Chart.yaml", "unable to parse YAML\n\t%s", err)
		return false
	}
	ok := true
	bad := func(format string, args ...interface{}) {
		report("ERROR", "Chart.yaml", format, args...)
		ok = false
	}
	switch {
	case m.APIVersion == "":
		bad(`apiVersion is required. The value must be "v2"`)
	case m.APIVersion != "v2":
		bad(`apiVersion '%s' is not valid. The value must be "v2"`, m.APIVersion)
	}
	if m.Name == "" {
		bad("name is required")
	}
	switch {
	case m.Version == "":
		bad("version is required")
	case !isSemver(m.Version):
		bad("version '%s' is not a valid SemVer", m.Version)
	}
	return ok
}

// lintDocuments checks each YAML document of one rendered template.
func lintDocuments(file, content string, report reporter) {
	docs := splitManifests(content)
	for i, doc := range docs {
		where := file
		if len(docs) > 1 {
			where = fmt.Sprintf("%s (document %d)", file, i+1)
		}
		var obj map[string]interface{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			report("ERROR", where, "unable to parse YAML: %s", err)
			continue
		}
		if obj == nil {
			continue // only comments: nothing is sent to the cluster
		}
		meta, _ := obj["metadata"].(map[string]interface{})
		for _, field := range []string{"apiVersion", "kind"} {
			if s, _ := obj[field].(string); s == "" {
				report("ERROR", where, "object has no %s", field)
			}
		}
		name, _ := meta["name"].(string)
		generateName, _ := meta["generateName"].(string)
		if name == "" && generateName == "" {
			report("ERROR", where, "object has no metadata.name")
		}
	}
}
