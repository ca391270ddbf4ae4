// Command etcd runs a single-member, in-memory-grade etcd for the e2e tests.
//
// Building etcd's own main would pull a second, differently pinned dependency graph; embedding the
// server package at the version k8s.io/kubernetes already requires keeps one module and one build.
// It listens on loopback only and stops on SIGINT/SIGTERM.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the member's data (required)")
	clientPort := flag.Int("client-port", 0, "loopback port for clients (required)")
	peerPort := flag.Int("peer-port", 0, "loopback port for the (unused) peer listener (required)")
	flag.Parse()
	if *dataDir == "" || *clientPort == 0 || *peerPort == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dataDir, *clientPort, *peerPort); err != nil {
		log.Fatalf("etcd: %v", err)
	}
}

func run(dataDir string, clientPort, peerPort int) error {
	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = dataDir
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
	cfg.LogLevel = "warn"
	// The data is thrown away after the run; fsync only slows the shared CI disk down.
	cfg.UnsafeNoFsync = true

	srv, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()

	select {
	case <-srv.Server.ReadyNotify():
		log.Printf("etcd: ready on %s", client.String())
	case <-time.After(60 * time.Second):
		return fmt.Errorf("not ready after 60s")
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case sig := <-stop:
		log.Printf("etcd: %v, shutting down", sig)
		return nil
	case err := <-srv.Err():
		return err
	}
}
