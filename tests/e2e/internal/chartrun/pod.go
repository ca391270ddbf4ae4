package chartrun

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Image is what the harness knows of a container image: its ENTRYPOINT and, for each binary a pod
// spec may name (by path, or by name on the image's PATH), the binary on this machine.
type Image struct {
	Entrypoint string
	Binaries   map[string]string
	// URLPathFlags take a value starting with "/" that is a URL path, not a file: left alone.
	// Any other such value must be under a volume mount.
	URLPathFlags []string
}

// Placement is what a pod gets from outside its spec.
type Placement struct {
	// PodRoot is the pod's own filesystem: its configMap and emptyDir volumes are written under it
	// (mountPath /etc/x is PodRoot/etc/x).
	PodRoot string
	// NodeName is the node the pod runs on (the fieldRef spec.nodeName).
	NodeName string
	// NodeRoot is that node's filesystem: hostPath /var/x is NodeRoot/var/x.
	NodeRoot string
	// Namespace is the pod's namespace (fieldRef metadata.namespace; its ConfigMaps').
	Namespace string
	// PodName and PodIP are the pod's name and address (fieldRefs metadata.name and status.podIP):
	// processes here all have the loopback address.
	PodName string
	PodIP   string
	// Kubeconfig carries the token of the pod's service account; --in-cluster becomes
	// --kubeconfig=Kubeconfig, since a process outside a pod has no mounted token to read.
	Kubeconfig string
	// Images by repository (the image reference without tag or digest).
	Images map[string]Image
	// ConfigMap reads a ConfigMap of Namespace from the API server.
	ConfigMap func(name string) (map[string]string, error)
	// FreePort returns a free loopback port.
	FreePort func() (int, error)
}

// Process is one container of a rendered pod, made runnable on this machine. Its arguments are the
// container's own, with three translations and nothing else: a path under a volume mount becomes
// the materialised path, a listen address on a declared container port becomes a free loopback
// port (pods have a network namespace each, processes here share one), and --in-cluster becomes
// --kubeconfig with the pod's service-account token.
type Process struct {
	Binary string
	Args   []string
	// Env is the container's environment ("KEY=value"), fieldRefs resolved.
	Env []string
	// Ports maps each declared container port to the loopback port it listens on here.
	Ports     map[int32]int
	container corev1.Container
	mounts    []mount
}

// mount is a volume mount: the path in the container and the directory here.
type mount struct {
	path string
	dir  string
}

// Prepare materialises the volumes container mounts and translates its command line.
func Prepare(spec corev1.PodSpec, container string, p Placement) (*Process, error) {
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == container })
	if i < 0 {
		return nil, fmt.Errorf("the pod spec has no container %q", container)
	}
	proc := &Process{container: spec.Containers[i], Ports: map[int32]int{}}
	img, ok := p.Images[imageRepository(proc.container.Image)]
	if !ok {
		return nil, fmt.Errorf("container %s: image %s is none the harness can run", container, proc.container.Image)
	}
	c := &proc.container
	for _, vm := range c.VolumeMounts {
		m, err := materialise(spec, vm, p)
		if err != nil {
			return nil, fmt.Errorf("container %s, volume %s: %w", c.Name, vm.Name, err)
		}
		proc.mounts = append(proc.mounts, m)
	}
	for _, port := range c.Ports {
		free, err := p.FreePort()
		if err != nil {
			return nil, err
		}
		proc.Ports[port.ContainerPort] = free
	}
	argv, err := proc.binary(c, img)
	if err != nil {
		return nil, err
	}
	for _, arg := range append(argv, c.Args...) {
		translated, err := proc.translate(arg, spec, p, img)
		if err != nil {
			return nil, fmt.Errorf("container %s, argument %q: %w", c.Name, arg, err)
		}
		proc.Args = append(proc.Args, translated)
	}
	if proc.Env, err = environment(c, p); err != nil {
		return nil, fmt.Errorf("container %s: %w", c.Name, err)
	}
	return proc, nil
}

// binary resolves the command (or the image's entrypoint) to a local binary and returns the rest
// of the command line.
func (proc *Process) binary(c *corev1.Container, img Image) ([]string, error) {
	argv := slices.Clone(c.Command)
	if len(argv) == 0 {
		argv = []string{img.Entrypoint}
	}
	bin, ok := img.Binaries[argv[0]]
	if !ok {
		return nil, fmt.Errorf("container %s: image %s has no %s", c.Name, imageRepository(c.Image), argv[0])
	}
	proc.Binary = bin
	return argv[1:], nil
}

// imageRepository strips the tag and the digest: "registry.k8s.io/kube-scheduler:v1.37.2" ->
// "registry.k8s.io/kube-scheduler".
func imageRepository(image string) string {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

// listenAddress is HOST:PORT with a host meaning "every interface" (or loopback).
var listenAddress = regexp.MustCompile(`^(|0\.0\.0\.0|\[::\]|127\.0\.0\.1|localhost):([0-9]+)$`)

// translate rewrites one argument (see Process).
func (proc *Process) translate(arg string, spec corev1.PodSpec, p Placement, img Image) (string, error) {
	if arg == "--in-cluster" {
		if spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken {
			return "", fmt.Errorf("the pod mounts no service-account token (automountServiceAccountToken: false)")
		}
		if p.Kubeconfig == "" {
			return "", fmt.Errorf("no identity for service account %q", spec.ServiceAccountName)
		}
		return "--kubeconfig=" + p.Kubeconfig, nil
	}
	prefix, value := "", arg
	if strings.HasPrefix(arg, "-") {
		flag, v, ok := strings.Cut(arg, "=")
		if !ok {
			return arg, nil
		}
		prefix, value = flag+"=", v
	}
	if strings.HasPrefix(value, "/") && !slices.Contains(img.URLPathFlags, strings.TrimSuffix(prefix, "=")) {
		local, err := proc.LocalPath(value)
		return prefix + local, err
	}
	if m := listenAddress.FindStringSubmatch(value); m != nil {
		port, _ := strconv.Atoi(m[2])
		local, ok := proc.Ports[int32(port)]
		if !ok {
			return "", fmt.Errorf("listens on port %d, which the container does not declare (probes and Services cannot reach it)", port)
		}
		return prefix + net.JoinHostPort("127.0.0.1", strconv.Itoa(local)), nil
	}
	return arg, nil
}

// LocalPath is where a path inside the container lives here; an error if no volume mount holds it
// (the container's own filesystem is the image's, which the harness does not have).
func (proc *Process) LocalPath(inPod string) (string, error) {
	best := -1
	for i, m := range proc.mounts {
		if (inPod == m.path || strings.HasPrefix(inPod, strings.TrimSuffix(m.path, "/")+"/")) &&
			(best < 0 || len(m.path) > len(proc.mounts[best].path)) {
			best = i
		}
	}
	if best < 0 {
		return "", fmt.Errorf("%s is under no volume mount of the container", inPod)
	}
	m := proc.mounts[best]
	return filepath.Join(m.dir, strings.TrimPrefix(inPod, m.path)), nil
}

// Port is the loopback port of a container port given by number or by name.
func (proc *Process) Port(port intstr.IntOrString) (int, error) {
	number := port.IntVal
	if port.Type == intstr.String {
		i := slices.IndexFunc(proc.container.Ports, func(p corev1.ContainerPort) bool { return p.Name == port.StrVal })
		if i < 0 {
			return 0, fmt.Errorf("container %s has no port named %q", proc.container.Name, port.StrVal)
		}
		number = proc.container.Ports[i].ContainerPort
	}
	local, ok := proc.Ports[number]
	if !ok {
		return 0, fmt.Errorf("container %s declares no port %d", proc.container.Name, number)
	}
	return local, nil
}

// ProbeURL is the URL a kubelet would probe, on this machine: the readiness probe's when the
// container has one, else the liveness probe's.
func (proc *Process) ProbeURL() (string, error) {
	probe := proc.container.ReadinessProbe
	if probe == nil {
		probe = proc.container.LivenessProbe
	}
	if probe == nil || probe.HTTPGet == nil {
		return "", fmt.Errorf("container %s has no HTTP readiness or liveness probe", proc.container.Name)
	}
	port, err := proc.Port(probe.HTTPGet.Port)
	if err != nil {
		return "", fmt.Errorf("probe: %w", err)
	}
	scheme := strings.ToLower(string(probe.HTTPGet.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, probe.HTTPGet.Path), nil
}

// materialise makes the directory a volume mount shows: a ConfigMap's keys as files, an empty
// directory, or the node's directory.
func materialise(spec corev1.PodSpec, vm corev1.VolumeMount, p Placement) (mount, error) {
	if vm.SubPath != "" || vm.SubPathExpr != "" {
		return mount{}, fmt.Errorf("subPath mounts are not supported by the harness")
	}
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
	if i < 0 {
		return mount{}, fmt.Errorf("the pod spec has no volume %q", vm.Name)
	}
	v := spec.Volumes[i]
	m := mount{path: vm.MountPath, dir: filepath.Join(p.PodRoot, vm.MountPath)}
	switch {
	case v.ConfigMap != nil:
		return m, writeConfigMap(m.dir, v.ConfigMap, p)
	case v.EmptyDir != nil:
		return m, os.MkdirAll(m.dir, 0o755)
	case v.HostPath != nil:
		m.dir = filepath.Join(p.NodeRoot, v.HostPath.Path)
		return m, hostPath(m.dir, v.HostPath)
	}
	return mount{}, fmt.Errorf("volume %s: only configMap, emptyDir and hostPath volumes are supported by the harness", v.Name)
}

// writeConfigMap writes the ConfigMap's keys (or its items) into dir, as the kubelet does.
func writeConfigMap(dir string, src *corev1.ConfigMapVolumeSource, p Placement) error {
	data, err := p.ConfigMap(src.Name)
	if err != nil {
		if src.Optional != nil && *src.Optional {
			return os.MkdirAll(dir, 0o755)
		}
		return fmt.Errorf("ConfigMap %s/%s: %w", p.Namespace, src.Name, err)
	}
	files := map[string]string{}
	if len(src.Items) == 0 {
		for k, v := range data {
			files[k] = v
		}
	}
	for _, item := range src.Items {
		v, ok := data[item.Key]
		if !ok {
			return fmt.Errorf("ConfigMap %s/%s has no key %q", p.Namespace, src.Name, item.Key)
		}
		files[item.Path] = v
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// hostPath checks or creates the node's directory as the volume's type asks.
func hostPath(dir string, src *corev1.HostPathVolumeSource) error {
	t := corev1.HostPathUnset
	if src.Type != nil {
		t = *src.Type
	}
	switch t {
	case corev1.HostPathDirectory:
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("hostPath %s (type Directory) is no directory on the node", src.Path)
		}
		return nil
	case corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate:
		return os.MkdirAll(dir, 0o755)
	}
	return fmt.Errorf("hostPath %s: type %s is not supported by the harness", src.Path, t)
}

// environment is the container's env with the fieldRefs a pod on Placement would see.
func environment(c *corev1.Container, p Placement) ([]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("envFrom is not supported by the harness")
	}
	var out []string
	for _, e := range c.Env {
		value := e.Value
		if from := e.ValueFrom; from != nil {
			if from.FieldRef == nil {
				return nil, fmt.Errorf("env %s: only fieldRef sources are supported by the harness", e.Name)
			}
			switch from.FieldRef.FieldPath {
			case "spec.nodeName":
				value = p.NodeName
			case "metadata.namespace":
				value = p.Namespace
			case "metadata.name":
				value = p.PodName
			case "status.podIP":
				value = p.PodIP
			default:
				return nil, fmt.Errorf("env %s: fieldRef %s is not supported by the harness", e.Name, from.FieldRef.FieldPath)
			}
		}
		out = append(out, e.Name+"="+value)
	}
	return out, nil
}
