package sqldb_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// throwawayCA makes a CA and, when serverDir is not "", a certificate for 127.0.0.1 signed by it
// (server.pem, server.key), owned by serverDir's owner so a server running as that user can
// read them. It returns the CA's PEM file.
func throwawayCA(t *testing.T, name, serverDir string) string {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), name+".pem")
	writePEM(t, caFile, "CERTIFICATE", caDER, -1, -1)
	if serverDir == "" {
		return caFile
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(serverDir)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	writePEM(t, filepath.Join(serverDir, "fb-test-server.pem"), "CERTIFICATE", der, int(sys.Uid), int(sys.Gid))
	writePEM(t, filepath.Join(serverDir, "fb-test-server.key"), "PRIVATE KEY", keyDER, int(sys.Uid), int(sys.Gid))
	return caFile
}

func writePEM(t *testing.T, path, kind string, der []byte, uid, gid int) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		if err := os.Chown(path, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Remove(path) })
}

// enablePostgresTLS turns TLS on in the shared PostgreSQL with a throwaway certificate, and off
// again when the test ends. It returns the CA that signed the certificate.
func enablePostgresTLS(t *testing.T, tg sqldb.Target) string {
	t.Helper()
	srv := testserver.Server(t, discovery.Postgres)
	ca := throwawayCA(t, "fb-test-ca", srv.DataDir)
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// The files are written through the host's path; the server may see its data directory
	// elsewhere (under chroot), so it is told its own path.
	rows, err := admin.Query(ctx, "SHOW data_directory")
	if err != nil {
		t.Fatal(err)
	}
	inner := rows[0][0]
	set := []string{
		"ALTER SYSTEM SET ssl_cert_file = '" + filepath.Join(inner, "fb-test-server.pem") + "'",
		"ALTER SYSTEM SET ssl_key_file = '" + filepath.Join(inner, "fb-test-server.key") + "'",
		"ALTER SYSTEM SET ssl = on",
		"SELECT pg_reload_conf()",
	}
	t.Cleanup(func() {
		c, err := sqldb.Open(ctx, tg)
		if err != nil {
			t.Errorf("turning TLS off: %v", err)
			return
		}
		defer c.Close()
		for _, q := range []string{"ALTER SYSTEM RESET ssl", "ALTER SYSTEM RESET ssl_cert_file", "ALTER SYSTEM RESET ssl_key_file", "SELECT pg_reload_conf()"} {
			if err := c.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	for _, q := range set {
		if err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The postmaster rereads its configuration asynchronously.
	required := withOption(t, tg, "sslmode", "require")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := sqldb.Open(ctx, required)
		if err == nil {
			c.Close()
			return ca
		}
		if time.Now().After(deadline) {
			t.Fatalf("TLS not on after reload: %v", err)
		}
	}
}

// TestTLS: plaintext unless asked, on every engine; what was asked is honoured or the connection
// fails; the server's own view of the transport is what Transport reports.
func TestTLS(t *testing.T) {
	pgTarget := testserver.Database(t, discovery.Postgres)
	pgCA := enablePostgresTLS(t, pgTarget)
	otherCA := throwawayCA(t, "fb-other-ca", "")
	mysqlCA := filepath.Join(testserver.Server(t, discovery.MySQL).DataDir, "ca.pem")
	type option struct{ name, value string }
	cases := []struct {
		kind string
		opts []option
		// want is "plaintext", "tls", "failed" (a TLSFailed error), or "tls-or-failed" where the
		// server may or may not have TLS (never plaintext).
		want string
	}{
		{discovery.Postgres, nil, "plaintext"},
		{discovery.Postgres, []option{{"sslmode", "require"}}, "tls"},
		{discovery.Postgres, []option{{"sslmode", "verify-full"}, {"sslrootcert", pgCA}}, "tls"},
		{discovery.Postgres, []option{{"sslmode", "verify-ca"}, {"sslrootcert", otherCA}}, "failed"},
		{discovery.MariaDB, nil, "plaintext"},
		{discovery.MariaDB, []option{{"ssl-mode", "REQUIRED"}}, "tls-or-failed"},
		{discovery.MySQL, nil, "plaintext"},
		{discovery.MySQL, []option{{"ssl-mode", "REQUIRED"}}, "tls"},
		{discovery.MySQL, []option{{"tls", "skip-verify"}}, "tls"},
		{discovery.MySQL, []option{{"ssl-mode", "VERIFY_CA"}, {"ssl-ca", otherCA}}, "failed"},
		// MySQL makes its own CA at initialisation (auto_generate_certs); its certificate names
		// no host, so VERIFY_CA passes and VERIFY_IDENTITY does not.
		{discovery.MySQL, []option{{"ssl-mode", "VERIFY_CA"}, {"ssl-ca", mysqlCA}}, "tls"},
		{discovery.MySQL, []option{{"ssl-mode", "VERIFY_IDENTITY"}, {"ssl-ca", mysqlCA}}, "failed"},
	}
	for _, c := range cases {
		name := c.kind
		for _, o := range c.opts {
			name += " " + o.name + "=" + filepath.Base(o.value)
		}
		t.Run(name, func(t *testing.T) {
			tg := pgTarget
			if c.kind != discovery.Postgres {
				tg = testserver.Database(t, c.kind)
			}
			for _, o := range c.opts {
				tg = withOption(t, tg, o.name, o.value)
			}
			got, err := transportOf(tg)
			var ce *sqldb.ConnectError
			switch {
			case err != nil && errors.As(err, &ce) && ce.Reason == sqldb.TLSFailed:
				got = "failed"
			case err != nil:
				t.Fatalf("%v", err)
			}
			t.Logf("transport: %s (%v)", got, err)
			ok := got == c.want ||
				(c.want == "tls" || c.want == "tls-or-failed") && strings.HasPrefix(got, "TLSv1.") ||
				c.want == "tls-or-failed" && got == "failed"
			if !ok {
				t.Fatalf("transport %q, want %s", got, c.want)
			}
		})
	}
}

func transportOf(tg sqldb.Target) (string, error) {
	ctx := context.Background()
	c, err := sqldb.Open(ctx, tg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return sqldb.Transport(ctx, c)
}

// TestHbaRefusal: a connection pg_hba.conf refuses (as a hostssl-only server refuses the
// plaintext default) names pg_hba.conf and the sslmode that may be missing, not a password.
func TestHbaRefusal(t *testing.T) {
	tg := testserver.Database(t, discovery.Postgres)
	srv := testserver.Server(t, discovery.Postgres)
	hba := filepath.Join(srv.DataDir, "pg_hba.conf")
	orig, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reload := func() {
		c, err := sqldb.Open(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the postmaster rereads it asynchronously
	}
	t.Cleanup(func() {
		if err := os.WriteFile(hba, orig, 0o600); err != nil {
			t.Error(err)
		}
		reload()
	})
	rule := "hostnossl all fb_hba_tls_only 127.0.0.1/32 reject\n"
	if err := os.WriteFile(hba, append([]byte(rule), orig...), 0o600); err != nil {
		t.Fatal(err)
	}
	reload()
	refused := tg
	refused.User, refused.Password = "fb_hba_tls_only", "whatever"
	_, err = sqldb.Open(ctx, refused)
	var ce *sqldb.ConnectError
	if !errors.As(err, &ce) || ce.Reason != sqldb.BadCredentials || !strings.Contains(err.Error(), "pg_hba.conf") ||
		!strings.Contains(err.Error(), "sslmode=require") || strings.Contains(err.Error(), "whatever") {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
}
