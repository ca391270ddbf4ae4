package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// AuditEvent is the part of an audit.k8s.io/v1 Event (level Metadata) the tests read: who made
// which request, and how the API server answered it.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

// Code is the HTTP status the request was answered with (0 if the event has none).
func (e AuditEvent) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Resource is the object's resource with its subresource ("pods/binding"); "" for a request
// without an object (GET /version).
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// APIGroup is the object's API group ("" for the core group and for requests without an object).
func (e AuditEvent) APIGroup() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.APIGroup
}

// String reads as one line of a failure message: user, verb, URI, status and RBAC's reason.
func (e AuditEvent) String() string {
	s := fmt.Sprintf("%s %s %s -> %d", e.User.Username, e.Verb, e.RequestURI, e.Code())
	if why := e.Annotations["authorization.k8s.io/reason"]; why != "" {
		s += " (" + why + ")"
	}
	return s
}

// ReadAuditLog reads every event of a JSON-lines audit log; a missing file has none.
func ReadAuditLog(path string) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
