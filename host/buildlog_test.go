package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCleanBuildLog: the lines NVIDIA's OpenCL writes for every kernel go,
// anything else stays (a warning about our source must reach the log).
func TestCleanBuildLog(t *testing.T) {
	nv := "(): Warning: Function scan_chain_k is a kernel, so overriding noinline attribute. The function may be inlined when called."
	assert.Equal(t, "", cleanBuildLog(nv+"\n\x00"))
	assert.Equal(t, "x.cl:3:1: warning: unused variable 'a'", cleanBuildLog(nv+"\nx.cl:3:1: warning: unused variable 'a'\n"+nv))
	assert.Equal(t, "2 warnings generated.", cleanBuildLog("  2 warnings generated.\n"))
	assert.Equal(t, "", cleanBuildLog(""))
}
