package e2e

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// noopExtender is the control of GTE_E2E_CONTROL=noop: an extender blind to GPUs. Its filter keeps
// every node it is given and its prioritize scores them all alike, so kube-scheduler decides from
// its in-tree plugins alone and breaks the remaining ties at random. A placement scenario that
// passes against it proves nothing about the extender under test; every placement scenario must
// fail against it (docs/testing.md, "Control mode").
type noopExtender struct {
	server *http.Server
	done   chan struct{}
}

// noopScore is what prioritize gives every node; any constant makes the same point.
const noopScore = 5

// startNoopExtender serves the no-op on a free loopback port and returns its URL prefix.
func startNoopExtender() (*noopExtender, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /scheduler/filter", func(w http.ResponseWriter, r *http.Request) {
		var args extenderv1.ExtenderArgs
		if !decodeArgs(w, r, &args) {
			return
		}
		// Echo what came in: full Node objects without nodeCacheCapable, names with it.
		writeJSON(w, extenderv1.ExtenderFilterResult{
			Nodes:       args.Nodes,
			NodeNames:   args.NodeNames,
			FailedNodes: extenderv1.FailedNodesMap{},
		})
	})
	mux.HandleFunc("POST /scheduler/prioritize", func(w http.ResponseWriter, r *http.Request) {
		var args extenderv1.ExtenderArgs
		if !decodeArgs(w, r, &args) {
			return
		}
		scores := extenderv1.HostPriorityList{}
		for _, name := range argNodeNames(args) {
			scores = append(scores, extenderv1.HostPriority{Host: name, Score: noopScore})
		}
		writeJSON(w, scores)
	})
	n := &noopExtender{
		server: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done:   make(chan struct{}),
	}
	go func() {
		defer close(n.done)
		if err := n.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err) // the listener was ours and open; anything else is a harness bug
		}
	}()
	return n, "http://" + ln.Addr().String() + "/scheduler", nil
}

// Stop closes the server and waits for its goroutine.
func (n *noopExtender) Stop() {
	_ = n.server.Close()
	<-n.done
}

func decodeArgs(w http.ResponseWriter, r *http.Request, args *extenderv1.ExtenderArgs) bool {
	if err := json.NewDecoder(r.Body).Decode(args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func argNodeNames(args extenderv1.ExtenderArgs) []string {
	if args.NodeNames != nil {
		return *args.NodeNames
	}
	var names []string
	if args.Nodes != nil {
		for _, node := range args.Nodes.Items {
			names = append(names, node.Name)
		}
	}
	return names
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
