package plots

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Default chart size, used by Save and Write when a dimension is 0.
const (
	DefaultWidth  = 6 * vg.Inch
	DefaultHeight = 4 * vg.Inch
)

// PNGDPI is the resolution of PNG output: a W×H chart is W·PNGDPI by
// H·PNGDPI pixels (576×384 at the default size).
const PNGDPI = vgimg.DefaultDPI

// Formats Write accepts.
const (
	SVG = "svg"
	PNG = "png"
	PDF = "pdf"
)

// FormatOf returns the output format for path from its extension,
// ignoring case: "svg" for .svg or no extension, "png" for .png and "pdf"
// for .pdf. Other extensions are an error.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case "", ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	case ".pdf":
		return PDF, nil
	}
	return "", fmt.Errorf("plots: %s: unsupported format %q (want .svg, .png or .pdf)", path, ext)
}

// Write draws c at the given size (0 means DefaultWidth or DefaultHeight)
// and writes it to w in format, one of SVG, PNG or PDF.
func Write(w io.Writer, c Chart, format string, width, height vg.Length) error {
	if width == 0 {
		width = DefaultWidth
	}
	if height == 0 {
		height = DefaultHeight
	}
	if width < 0 || height < 0 {
		return fmt.Errorf("plots: invalid size %v×%v", width, height)
	}
	var canvas vg.CanvasWriterTo
	switch strings.ToLower(format) {
	case SVG:
		canvas = vgsvg.New(width, height) // fonts referenced, not embedded
	case PNG:
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(white))}
	case PDF:
		canvas = vgpdf.New(width, height)
	default:
		return fmt.Errorf("plots: unsupported format %q (want svg, png or pdf)", format)
	}
	c.Draw(draw.New(canvas))
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("plots: write %s: %w", format, err)
	}
	return nil
}

// Save draws c at the given size (0 means the default) and writes it to
// path in the format its extension names (see FormatOf). The chart is
// rendered in memory and written to a temporary file in the same
// directory, which is then renamed over path: on error path is left as it
// was and no temporary file remains.
func Save(c Chart, path string, width, height vg.Length) (err error) {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Write(&buf, c, format, width, height); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}
