package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the throw-away key material of one run, written as PEM files under Dir.
type PKI struct {
	Dir       string
	CAFile    string // CA that signed the serving certificate
	CertFile  string // kube-apiserver serving certificate for 127.0.0.1 and localhost
	KeyFile   string
	SAKeyFile string // service-account token signing key (private)
	SAPubFile string // its public half, for verification
	Token     string // bearer token of the system:masters user
	TokenFile string // --token-auth-file content: token,user,uid,"groups"
}

// NewPKI creates a CA, a loopback serving certificate, a service-account key pair and an admin
// token in dir.
func NewPKI(dir string) (*PKI, error) {
	p := &PKI{
		Dir:       dir,
		CAFile:    filepath.Join(dir, "ca.crt"),
		CertFile:  filepath.Join(dir, "apiserver.crt"),
		KeyFile:   filepath.Join(dir, "apiserver.key"),
		SAKeyFile: filepath.Join(dir, "sa.key"),
		SAPubFile: filepath.Join(dir, "sa.pub"),
		TokenFile: filepath.Join(dir, "tokens.csv"),
	}
	steps := []func() error{p.writeCerts, p.writeSAKeys, p.writeToken}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *PKI) writeCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gte-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.CAFile, "CERTIFICATE", caDER); err != nil {
		return err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.CertFile, "CERTIFICATE", der); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(p.KeyFile, "EC PRIVATE KEY", keyDER)
}

// writeSAKeys uses RSA because every kube-apiserver release accepts RS256 service-account keys.
func (p *PKI) writeSAKeys() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writePEM(p.SAKeyFile, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(p.SAPubFile, "PUBLIC KEY", pub)
}

func (p *PKI) writeToken() error {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	p.Token = hex.EncodeToString(b)
	line := fmt.Sprintf("%s,gte-e2e-admin,gte-e2e-admin,\"system:masters\"\n", p.Token)
	return os.WriteFile(p.TokenFile, []byte(line), 0o600)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
