package chartrun

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Release and Namespace are the release the tests render the chart as.
const (
	Release   = "gte"
	Namespace = "gpu-system"
)

// Render runs `helm template` on the chart directory as Release in Namespace, with extra helm
// arguments (values).
func Render(helm, chart string, args ...string) ([]byte, error) {
	if _, err := os.Stat(helm); err != nil {
		return nil, fmt.Errorf("helm: %w (scripts/build-helm.sh builds it; or set GTE_HELM)", err)
	}
	full := append([]string{"template", Release, chart, "--namespace", Namespace}, args...)
	var stderr bytes.Buffer
	cmd := exec.Command(helm, full...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(full, " "), err, stderr.String())
	}
	return out, nil
}
