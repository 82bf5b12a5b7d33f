package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
)

// TestListParams checks the list-parameter parser every op with a list
// parameter uses: comma-separated integers, spaces allowed, an empty list,
// and a clear error naming the parameter otherwise.
func TestListParams(t *testing.T) {
	p := params{op: "op", vals: map[string]string{"a": "3,3, 3", "b": "", "c": "-1", "d": "1,x", "e": "1,,2"}}
	got, err := p.int64s("a")
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 3, 3}, got)
	got, err = p.int64s("b")
	require.NoError(t, err)
	assert.Equal(t, []int64{}, got)
	got, err = p.int64s("c")
	require.NoError(t, err)
	assert.Equal(t, []int64{-1}, got)
	for _, name := range []string{"d", "e"} {
		_, err = p.int64s(name)
		require.ErrorIs(t, err, accel.ErrInvalidArgument)
		var ae *accel.ArgError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, name, ae.Arg)
	}
}
