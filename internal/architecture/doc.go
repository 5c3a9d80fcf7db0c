// Package architecture holds no code: its test keeps the layers as docs/architecture.md draws
// them, by reading each package's imports.
package architecture
