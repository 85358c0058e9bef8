package main

import (
	"bytes"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// The Kubernetes recipe (deploy/kubernetes) is checked without a cluster:
// every document decodes strictly (no unknown or misspelt field) into the
// Kubernetes API type of its kind, and the pieces fit together — the
// command lines parse with wirebench's own flags, the split n agrees with
// the Indexed Job's completions and parallelism, the merge reads where
// the segments write, on one volume, and the load's URL is the target
// Service. k8s.io/api is used by this test only: it is not in the binary.

const deployDir = "../../deploy/kubernetes"

type manifests struct {
	jobs     map[string]*batchv1.Job
	deploys  map[string]*appsv1.Deployment
	services map[string]*corev1.Service
	pvcs     map[string]*corev1.PersistentVolumeClaim
}

// readManifests decodes every YAML document of deploy/kubernetes strictly.
func readManifests(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", deployDir, err)
	}
	m := manifests{map[string]*batchv1.Job{}, map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}, map[string]*corev1.PersistentVolumeClaim{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			name := filepath.Base(f) + " document " + strconv.Itoa(i+1)
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			strict := func(v any) {
				t.Helper()
				if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
					t.Fatalf("%s (%s %s): %v", name, head.APIVersion, head.Kind, err)
				}
			}
			switch head.APIVersion + " " + head.Kind {
			case "batch/v1 Job":
				var o batchv1.Job
				strict(&o)
				m.jobs[o.Name] = &o
			case "apps/v1 Deployment":
				var o appsv1.Deployment
				strict(&o)
				m.deploys[o.Name] = &o
			case "v1 Service":
				var o corev1.Service
				strict(&o)
				m.services[o.Name] = &o
			case "v1 PersistentVolumeClaim":
				var o corev1.PersistentVolumeClaim
				strict(&o)
				m.pvcs[o.Name] = &o
			default:
				t.Fatalf("%s: %s %s is not a kind this test knows: add it here", name, head.APIVersion, head.Kind)
			}
		}
	}
	return m
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestStrictDecodeRefuses: the strict decoding this file relies on does
// refuse a misspelt field (a test that cannot fail proves nothing).
func TestStrictDecodeRefuses(t *testing.T) {
	t.Parallel()
	var j batchv1.Job
	err := yaml.UnmarshalStrict([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionsMode: Indexed\n"), &j)
	if err == nil || !strings.Contains(err.Error(), "completionsMode") {
		t.Errorf("misspelt field accepted: %v", err)
	}
}

func TestKubernetesRecipe(t *testing.T) {
	t.Parallel()
	m := readManifests(t)
	load1, merge := m.jobs["wirebench-load"], m.jobs["wirebench-merge"]
	if load1 == nil || merge == nil {
		t.Fatalf("want Jobs wirebench-load and wirebench-merge, have %v", m.jobs)
	}

	// The Indexed Job: n pods at once, one per index, none retried.
	s := load1.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("wirebench-load is not an Indexed Job")
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 2 {
		t.Fatalf("completions %d, parallelism %d: want equal (every segment runs at once) and ≥ 2", deref(s.Completions), deref(s.Parallelism))
	}
	n := int(*s.Completions)
	for _, j := range []*batchv1.Job{load1, merge} {
		if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: want backoffLimit 0 and restartPolicy Never (a segment cannot rejoin a started schedule; a merge's exit 99 is the answer)", j.Name)
		}
	}

	// The segments' command line, parsed by load's own flags.
	lc := onlyContainer(t, load1.Spec.Template.Spec)
	var f loadFlags
	fs := newLoadFlags(&cliEnv{stdout: io.Discard, stderr: io.Discard}, &f)
	if err := fs.Parse(lc.Args[1:]); err != nil || lc.Args[0] != "load" {
		t.Fatalf("load args %q: %v", lc.Args, err)
	}
	if err := f.Check(fs); err != nil {
		t.Fatalf("load args: %v", err)
	}
	for idx := range n {
		var o load.Options
		env := func(string) string { return strconv.Itoa(idx) }
		if err := f.Dist.Apply(f.Segment, &o, env); err != nil || o.Segment != (results.Segment{I: idx + 1, N: n}) {
			t.Fatalf("pod %d: --segment %s gives %v, %v; want %d/%d", idx, f.Segment, o.Segment, err, idx+1, n)
		}
		if o.Barrier == nil {
			t.Fatal("the segments do not meet at a --barrier")
		}
	}
	if !f.Options.Open && f.Options.Rate == 0 {
		t.Error("the recipe's test is not open loop (-r): segments of a closed-loop test need no shared schedule")
	}
	if len(f.Output.Thresholds) == 0 {
		t.Error("no --threshold: the recipe should show thresholds judged on the merge")
	}
	for _, th := range f.Output.Thresholds {
		if _, err := results.ParseThreshold(th); err != nil {
			t.Error(err)
		}
	}
	segDir := f.Output.Out
	if !strings.HasSuffix(segDir, "/") {
		t.Errorf("--out %q: want a directory (dir/), one file per segment", segDir)
	}

	// The merge: reads the segments' directory, waits for them, writes
	// elsewhere on the same volume.
	mc := onlyContainer(t, merge.Spec.Template.Spec)
	var mf mergeFlags
	mfs := newMergeFlags(&cliEnv{stdout: io.Discard, stderr: io.Discard}, &mf)
	pos, err := parseInterspersed(mfs, mc.Args[1:])
	if err != nil || mc.Args[0] != "merge" {
		t.Fatalf("merge args %q: %v", mc.Args, err)
	}
	if len(pos) != 1 || filepath.Clean(pos[0]) != filepath.Clean(segDir) {
		t.Errorf("merge reads %v, the segments write %s", pos, segDir)
	}
	if mf.wait <= 0 || mf.unchecked || mf.out == "" || strings.HasPrefix(filepath.Clean(mf.out), filepath.Clean(segDir)+"/") {
		t.Errorf("merge: --wait %v, --unchecked %v, --out %q: want a wait, the checks, and the merged file outside %s", mf.wait, mf.unchecked, mf.out, segDir)
	}
	lv, mv := volumeFor(t, load1.Spec.Template.Spec, lc, segDir), volumeFor(t, merge.Spec.Template.Spec, mc, pos[0])
	if lv == "" || lv != mv || m.pvcs[lv] == nil {
		t.Errorf("segments write to claim %q, the merge reads claim %q: want one PersistentVolumeClaim of the recipe", lv, mv)
	}
	if b := f.Dist.Barrier; volumeFor(t, load1.Spec.Template.Spec, lc, b) != lv {
		t.Errorf("barrier %s is not on the shared volume", b)
	}

	// One image; its entrypoint is the binary, so args start with a command.
	images := map[string]bool{lc.Image: true, mc.Image: true}
	for _, d := range m.deploys {
		for _, c := range d.Spec.Template.Spec.Containers {
			images[c.Image] = true
		}
	}
	if len(images) != 1 || lc.Command != nil || mc.Command != nil {
		t.Errorf("images %v, commands %q %q: want one image, its ENTRYPOINT", images, lc.Command, mc.Command)
	}

	// The load's URL is the target Service, which selects the target pods.
	u, err := url.Parse(fs.Arg(0))
	if err != nil || fs.NArg() != 1 {
		t.Fatalf("load URL %v: %v", fs.Args(), err)
	}
	svc := m.services[u.Hostname()]
	if svc == nil {
		t.Fatalf("load targets %s, which is no Service of the recipe", u.Host)
	}
	if len(svc.Spec.Ports) != 1 || strconv.Itoa(int(svc.Spec.Ports[0].Port)) != u.Port() {
		t.Errorf("Service %s ports %v, the URL's port %s", svc.Name, svc.Spec.Ports, u.Port())
	}
	d := m.deploys[svc.Name]
	if d == nil || !subset(svc.Spec.Selector, d.Spec.Template.Labels) || !subset(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Fatalf("Service %s selects no pods of the recipe's Deployment", svc.Name)
	}
	tc := onlyContainer(t, d.Spec.Template.Spec)
	if len(tc.Ports) != 1 || tc.Ports[0].Name != svc.Spec.Ports[0].TargetPort.String() {
		t.Errorf("target port %v, the Service sends to %v", tc.Ports, svc.Spec.Ports[0].TargetPort)
	}
	if !strings.Contains(strings.Join(tc.Args, " "), "0.0.0.0:"+strconv.Itoa(int(tc.Ports[0].ContainerPort))) {
		t.Errorf("target args %q do not listen on the pod's port %d", tc.Args, tc.Ports[0].ContainerPort)
	}
}

func onlyContainer(t *testing.T, p corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(p.Containers) != 1 || len(p.Containers[0].Args) == 0 {
		t.Fatalf("want one container with args, have %d", len(p.Containers))
	}
	return p.Containers[0]
}

// volumeFor names the claim mounted where path is, in container c.
func volumeFor(t *testing.T, p corev1.PodSpec, c corev1.Container, path string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if path == vm.MountPath || strings.HasPrefix(filepath.Clean(path), filepath.Clean(vm.MountPath)+"/") {
			for _, v := range p.Volumes {
				if v.Name == vm.Name && v.PersistentVolumeClaim != nil {
					return v.PersistentVolumeClaim.ClaimName
				}
			}
		}
	}
	return ""
}

func subset(sub, set map[string]string) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if set[k] != v {
			return false
		}
	}
	return true
}

// TestDockerfile: the image is the static binary FROM scratch, started
// as the ENTRYPOINT the manifests' args rely on.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	stages := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(s, -1)
	if len(stages) < 2 || stages[len(stages)-1][1] != "scratch" {
		t.Errorf("stages %v: want a build stage and a final FROM scratch", stages)
	}
	for _, want := range []string{"CGO_ENABLED=0 go build", "-o /wirebench ", "./cmd/wirebench", `ENTRYPOINT ["/wirebench"]`, "USER 65532"} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestNoCgoDependency: no module the binary depends on needs cgo, so the
// CGO_ENABLED=0 build of the Dockerfile works alike (a cgo-only driver,
// such as a SQLite binding over the C library, would build under
// CGO_ENABLED=0 as a stub that fails at run time: this catches it).
// The standard library's cgo parts (net, os/user) have Go fallbacks, and
// so has each package in cgoWithFallback: store/sqlite uses mattn's C
// SQLite only in its //go:build cgo files and ncruces otherwise, so the
// CGO_ENABLED=0 build must not even list it (TestCgoFallbacksLeaveNoStub).
func TestNoCgoDependency(t *testing.T) {
	t.Parallel()
	testkit.NeedTool(t, "go", "https://go.dev/doc/install")
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if !cgoWithFallback[p] {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) > 0 {
		t.Errorf("packages with cgo in the binary: %v: the scratch image's CGO_ENABLED=0 build would lose them", pkgs)
	}
}

// cgoWithFallback are the cgo packages a cgo build may use because a pure
// Go one replaces them, by build constraint, without cgo.
var cgoWithFallback = map[string]bool{"github.com/mattn/go-sqlite3": true}

// TestCgoFallbacksLeaveNoStub: under CGO_ENABLED=0 no package of
// cgoWithFallback is in the binary at all (mattn's !cgo build is a stub
// that fails at run time).
func TestCgoFallbacksLeaveNoStub(t *testing.T) {
	t.Parallel()
	testkit.NeedTool(t, "go", "https://go.dev/doc/install")
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %v", len(deps), deps)
	}
	for _, p := range deps {
		if cgoWithFallback[p] {
			t.Errorf("%s is in the CGO_ENABLED=0 build: its stub would fail at run time", p)
		}
	}
}

func deref(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}
