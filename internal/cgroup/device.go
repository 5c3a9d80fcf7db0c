package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DiskOf is the block device ("MAJ:MIN") that holds path, as the block layer counts it: the
// whole disk for a partition, since a partition's I/O is accounted to its disk. It fails for a
// filesystem with no block device of its own (tmpfs, overlay, btrfs subvolumes).
func DiskOf(path string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", err
	}
	major := uint32((st.Dev>>8)&0xfff | (st.Dev>>32)&^0xfff)
	minor := uint32(st.Dev&0xff | (st.Dev>>12)&^0xff)
	dev := fmt.Sprintf("%d:%d", major, minor)
	sys := filepath.Join("/sys/dev/block", dev)
	if _, err := os.Stat(sys); err != nil {
		return "", fmt.Errorf("%s is on device %s, which is no block device (tmpfs, overlay or similar)", path, dev)
	}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		b, err := os.ReadFile(filepath.Join(sys, "..", "dev"))
		if err != nil {
			return "", fmt.Errorf("finding the disk of partition %s: %w", dev, err)
		}
		dev = strings.TrimSpace(string(b))
	}
	return dev, nil
}

// DeviceName is the kernel's name of a block device ("vda", "loop3"), or "" if unknown.
func DeviceName(dev string) string {
	t, err := os.Readlink(filepath.Join("/sys/dev/block", dev))
	if err != nil {
		return ""
	}
	return filepath.Base(t)
}

// Journaled says whether the filesystem holding path keeps a jbd2 journal (ext4, ext3): its
// commits, which every fsync that changes metadata causes, are written by a kernel thread that
// no cgroup is charged for.
func Journaled(path string) bool {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false
	}
	major := uint32((st.Dev>>8)&0xfff | (st.Dev>>32)&^0xfff)
	minor := uint32(st.Dev&0xff | (st.Dev>>12)&^0xff)
	name := DeviceName(fmt.Sprintf("%d:%d", major, minor))
	if name == "" {
		return false
	}
	_, err := os.Stat(filepath.Join("/proc/fs/jbd2", name+"-8"))
	return err == nil
}
