package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ControlPlane is etcd plus kube-apiserver on loopback. There is no controller-manager and no
// kubelet: nodes are plain API objects, so nothing marks them NotReady or taints them.
type ControlPlane struct {
	Dir        string // work directory: PKI, etcd data, kubeconfig
	LogDir     string
	URL        string // https://127.0.0.1:<port>
	Kubeconfig string // admin kubeconfig, for our client, the scheduler and the extender
	// AuditLog holds one JSON line (audit.k8s.io/v1 Event, level Metadata) per request a service
	// account made, and nothing else: the requests of the chart's identities (ReadAuditLog).
	AuditLog string
	PKI      *PKI
	// Release: the binaries' Kubernetes release and the gates they know (the version matrix runs
	// older ones).
	Release   *Release
	etcd      *Process
	apiserver *Process
}

// FeatureGates are the API server's gates, and a gang-scheduling kube-scheduler's.
const FeatureGates = "GenericWorkload=true"

// APIServerOnlyFeatureGates are on for the API server only. DRAOptionalNodeOperations (alpha,
// 1.37) keeps ResourceSlice spec.skipNodeOperations, which the agent's NVLink-island companion
// slices carry (dra_companion_test.go); it changes nothing for objects without the field. Only that
// scenario's own kube-scheduler turns it on too (it switches the allocator to its experimental
// variant), so every other scenario keeps the default scheduler.
const APIServerOnlyFeatureGates = "DRAOptionalNodeOperations=true"

// admission plugins that need controllers we do not run, as upstream integration tests disable them.
const disabledAdmission = "ServiceAccount,TaintNodesByCondition,Priority,StorageObjectInUseProtection"

// StartControlPlane starts etcd and kube-apiserver from binDir and waits until /readyz is 200.
// On error, whatever was started is stopped again.
func StartControlPlane(ctx context.Context, binDir, dir, logDir string) (*ControlPlane, error) {
	cp := &ControlPlane{Dir: dir, LogDir: logDir, Kubeconfig: filepath.Join(dir, "kubeconfig"),
		AuditLog: filepath.Join(logDir, "audit.log")}
	if err := cp.start(ctx, binDir); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, binDir string) error {
	if err := os.MkdirAll(cp.Dir, 0o700); err != nil {
		return err
	}
	var err error
	if cp.Release, err = ProbeRelease(binDir); err != nil {
		return err
	}
	if cp.PKI, err = NewPKI(cp.Dir); err != nil {
		return err
	}
	etcdURL, err := cp.startEtcd(binDir)
	if err != nil {
		return err
	}
	if err := cp.startAPIServer(ctx, binDir, etcdURL); err != nil {
		return err
	}
	return WriteKubeconfig(cp.Kubeconfig, cp.URL, cp.PKI.CAFile, "admin", cp.PKI.Token)
}

// auditPolicy records every request of a service account at level Metadata (who, verb, object,
// response code) once answered, and nothing of anyone else (the tests' admin). A watch is
// recorded when its response starts too, since it completes only when it ends.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`

func (cp *ControlPlane) startEtcd(binDir string) (string, error) {
	clientPort, err := FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := FreePort()
	if err != nil {
		return "", err
	}
	cp.etcd, err = StartProcess("etcd", cp.LogDir, filepath.Join(binDir, "etcd"),
		"--data-dir", filepath.Join(cp.Dir, "etcd"),
		"--client-port", strconv.Itoa(clientPort),
		"--peer-port", strconv.Itoa(peerPort))
	// kube-apiserver retries its etcd connection, so there is no need to wait for etcd here; its
	// readiness is part of the apiserver's /readyz.
	return fmt.Sprintf("http://127.0.0.1:%d", clientPort), err
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, binDir, etcdURL string) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	cp.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	p := cp.PKI
	args := []string{}
	// The Workload / PodGroup API (scheduling.k8s.io/v1beta1, from v1.37) is served only with
	// this gate and version on, both off by default. Pods then keep spec.schedulingGroup, and a
	// kube-scheduler started with the same gate schedules each PodGroup as a gang
	// (docs/groups.md); one without it schedules the same pods one by one. Older releases start
	// with their defaults, as a cluster of that release runs: their PodGroup API is alpha at
	// another version (v1alpha1, v1alpha2), which the extender does not read, and v1.36's API
	// server with GenericWorkload on but that version not served never becomes ready (its own
	// informers wait for v1alpha2 PodGroups).
	if cp.Release.AtLeast(37) {
		if gates := cp.Release.KnownGates(FeatureGates+","+APIServerOnlyFeatureGates, false); gates != "" {
			args = append(args, "--feature-gates="+gates)
		}
		args = append(args, "--runtime-config=scheduling.k8s.io/v1beta1=true")
	}
	policy := filepath.Join(cp.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	cp.apiserver, err = StartProcess("kube-apiserver", cp.LogDir, filepath.Join(binDir, "kube-apiserver"),
		append([]string{"--etcd-servers=" + etcdURL,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			// The kubernetes Service endpoint reconciler refuses loopback addresses; nothing here
			// needs that Service.
			"--endpoint-reconciler-type=none",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(cp.Dir, "apiserver-certs"),
			"--tls-cert-file=" + p.CertFile,
			"--tls-private-key-file=" + p.KeyFile,
			"--token-auth-file=" + p.TokenFile,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + p.SAPubFile,
			"--service-account-signing-key-file=" + p.SAKeyFile,
			"--service-cluster-ip-range=10.0.0.0/24",
			"--audit-policy-file=" + policy,
			"--audit-log-path=" + cp.AuditLog,
			"--audit-log-format=json",
			// Each event is written before the request returns, so a test reading the log after a
			// request sees it.
			"--audit-log-mode=blocking",
			"--disable-admission-plugins=" + disabledAdmission,
			"--profiling=false",
			"--v=1",
		}, args...)...)
	if err != nil {
		return err
	}
	client, err := cp.httpClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return WaitHTTP(ctx, client, cp.URL+"/readyz", p.Token, cp.apiserver)
}

// httpClient trusts only our CA.
func (cp *ControlPlane) httpClient() (*http.Client, error) {
	pem, err := os.ReadFile(cp.PKI.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", cp.PKI.CAFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, nil
}

// WriteKubeconfig writes a kubeconfig for server, trusting only the CA in caFile, that
// authenticates as user with a bearer token.
func WriteKubeconfig(path, server, caFile, user, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: %s}
current-context: e2e
`, server, base64.StdEncoding.EncodeToString(ca), user, token, user)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// Processes returns the running control-plane processes, for diagnostics.
func (cp *ControlPlane) Processes() []*Process {
	var out []*Process
	for _, p := range []*Process{cp.apiserver, cp.etcd} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Stop stops kube-apiserver, then etcd.
func (cp *ControlPlane) Stop() {
	for _, p := range cp.Processes() {
		p.Stop(15 * time.Second)
	}
}
