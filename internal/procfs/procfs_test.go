package procfs

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

func TestStatFieldsAndTree(t *testing.T) {
	f, ok := StatFields(os.Getpid())
	if !ok || f[1] != strconv.Itoa(os.Getppid()) {
		t.Fatalf("StatFields(self) = %v, %v: want the parent %d as field 4", f, ok, os.Getppid())
	}
	child := exec.Command("sleep", "10")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if tree := Tree(os.Getpid()); tree[0] != os.Getpid() || !slices.Contains(tree, child.Process.Pid) {
		t.Errorf("Tree(self) = %v: want this process first and its child %d in it", tree, child.Process.Pid)
	}
	if _, ok := StatFields(-1); ok {
		t.Error("a process that cannot exist was read")
	}
}
