"""gnuplot for bench/'s Python scripts: one place that picks the terminal, quotes strings and runs
the program, so that every plot prints its labels as written (gnuplot's enhanced text mode would
turn my_cpu_relax_multiplier's underscores into subscripts) and fails the same way.

    terminal(w, h[, font])   the "set terminal" line: pngcairo where gnuplot has it, else png
    quote(text)              a gnuplot single-quoted string ('' stands for a quote)
    run(commands)            runs gnuplot on the commands (after the terminal line, which they start
                             with); raises PlotError with gnuplot's message if it fails
    available()              gnuplot is on PATH

Python 3 standard library only; gnuplot from Debian's gnuplot-nox.
"""

import functools
import shutil
import subprocess


class PlotError(Exception):
    pass


def available():
    return shutil.which("gnuplot") is not None


@functools.lru_cache(maxsize=1)
def _has_cairo():
    r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (r.stdout + r.stderr)


def terminal(width, height, font=",10"):
    if _has_cairo():
        return f"set terminal pngcairo size {width},{height} font {quote(font)}"
    return f"set terminal png size {width},{height}"


def quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def run(commands):
    """commands: the script's lines, its terminal line first. Labels print as written."""
    script = [commands[0], "set termoption noenhanced", *commands[1:]]
    r = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        raise PlotError(r.stderr.strip()[:300] or f"gnuplot exited with status {r.returncode}")
