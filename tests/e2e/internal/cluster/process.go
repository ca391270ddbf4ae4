// Package cluster starts and stops the processes of an e2e run: etcd, kube-apiserver,
// kube-scheduler and the extender under test, each with its own log file.
package cluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one child process. It runs in its own process group so that stopping it also stops
// anything it forked, and it gets SIGKILL if the test binary dies (panic, -timeout) before it could
// stop it.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	// StopSignal is what Stop sends first (SIGTERM when zero).
	StopSignal syscall.Signal
}

// StartProcess runs bin with args, stdout and stderr both going to <logDir>/<name>.log.
func StartProcess(name, logDir, bin string, args ...string) (*Process, error) {
	return StartProcessEnv(name, logDir, bin, nil, args...)
}

// StartProcessEnv is StartProcess with env ("KEY=value") added to this process's environment.
func StartProcessEnv(name, logDir, bin string, env []string, args ...string) (*Process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "# %s\n", strings.Join(slices.Concat(env, []string{bin}, args), " "))
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	track(p)
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		untrack(p)
		close(p.done)
	}()
	return p, nil
}

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// HasExited says, without waiting, whether the process has exited.
func (p *Process) HasExited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitErr describes how the process ended; only meaningful after Exited is closed.
func (p *Process) ExitErr() error { return p.err }

// Stop sends StopSignal (SIGTERM) to the process group, waits up to grace, then sends SIGKILL. It is
// safe to call more than once and on a process that already exited.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	sig := p.StopSignal
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	_ = syscall.Kill(-pgid, sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// Tail returns the last n lines of the log.
func (p *Process) Tail(n int) string {
	lines := p.grep(func(string) bool { return true })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Grep returns the log lines that contain any of the substrings.
func (p *Process) Grep(substrings ...string) []string {
	return p.grep(func(line string) bool {
		for _, s := range substrings {
			if strings.Contains(line, s) {
				return true
			}
		}
		return false
	})
}

func (p *Process) grep(keep func(string) bool) []string {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return []string{fmt.Sprintf("(cannot read %s: %v)", p.LogPath, err)}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if keep(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// FreePort returns a loopback TCP port that was free a moment ago. Another process may take it
// before our child binds it; the window is small and the failure is loud (bind error in the log).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitHTTP polls url with client until it answers 200, the context ends, or p exits. The error
// names the process and carries the end of its log, so a failed start explains itself.
func WaitHTTP(ctx context.Context, client *http.Client, url, token string, p *Process) error {
	var last string
	for {
		status, err := get(ctx, client, url, token)
		switch {
		case err == nil && status == http.StatusOK:
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = fmt.Sprintf("HTTP %d", status)
		}
		select {
		case <-p.Exited():
			return fmt.Errorf("%s exited (%v) before %s answered 200; last %d lines of %s:\n%s",
				p.Name, p.ExitErr(), url, 40, p.LogPath, p.Tail(40))
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer 200 in time (last: %s); last %d lines of %s:\n%s",
				p.Name, url, last, 40, p.LogPath, p.Tail(40))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func get(ctx context.Context, client *http.Client, url, token string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// running holds every process started and not yet exited, in start order, so StopAll can clean up
// after a failure path that lost track of them.
var running struct {
	sync.Mutex
	procs []*Process
}

func track(p *Process) {
	running.Lock()
	defer running.Unlock()
	running.procs = append(running.procs, p)
}

func untrack(p *Process) {
	running.Lock()
	defer running.Unlock()
	running.procs = slices.DeleteFunc(running.procs, func(q *Process) bool { return q == p })
}

// StopAll stops every running process this package started, newest first, so the scheduler goes
// before the apiserver and the apiserver before etcd.
func StopAll() {
	running.Lock()
	procs := slices.Clone(running.procs)
	running.Unlock()
	for _, p := range slices.Backward(procs) {
		p.Stop(10 * time.Second)
	}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times; 100 on every Linux the harness
// runs on (glibc's sysconf(_SC_CLK_TCK) answers the same constant).
const clockTicks = 100

// CPUSeconds is the CPU time (user + system) the process has used so far, from /proc/<pid>/stat;
// children it forked are not included.
func (p *Process) CPUSeconds() (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	s := string(raw)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("%s: unreadable /proc stat", p.Name)
	}
	fields := strings.Fields(s[end+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("%s: short /proc stat", p.Name)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s: /proc stat times %q %q", p.Name, fields[11], fields[12])
	}
	return (utime + stime) / clockTicks, nil
}
