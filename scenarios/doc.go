// Package scenarios defines rxsim's scenario schema (Spec), loads scenarios
// from TOML files or the built-in set, applies `--set key=value` overrides by
// dotted TOML path, fills defaults from the named hardware profile, and
// validates every field with errors that name the file, the line and the
// field. Loading is pure: no clock, no environment, no RNG.
package scenarios
