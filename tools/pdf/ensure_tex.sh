#!/usr/bin/env bash
# The TeX tools `make pdf` needs, installed from the system's package manager when they are missing.
# Debian/Ubuntu only (apt-get, as root or through sudo); elsewhere it names what to install and fails.
# About 400 MB and 3 minutes on a fresh Debian machine; nothing is done when the tools are there.
set -euo pipefail
packages=(texlive-latex-recommended texlive-latex-extra texlive-xetex texlive-fonts-recommended
          latexmk xindy fonts-freefont-otf poppler-utils)
have() {
  for tool in xelatex latexmk xindy pdfinfo pdftoppm; do command -v "$tool" >/dev/null 2>&1 || return 1; done
  # the LaTeX packages sphinx's class loads (texlive-latex-extra), and the FreeFont the xelatex build uses
  for sty in tabulary.sty capt-of.sty needspace.sty fncychap.sty wrapfig.sty; do
    kpsewhich "$sty" >/dev/null 2>&1 || return 1
  done
  case "$(fc-list : family 2>/dev/null)" in *FreeSerif*) ;; *) return 1 ;; esac
}
if have; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "make pdf needs xelatex, latexmk, xindy, poppler and GNU FreeFont: install ${packages[*]} (Debian names)" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "installing the TeX tools needs root: apt-get install ${packages[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "installing the TeX tools for the PDF (apt-get, about 400 MB): ${packages[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
have || { echo "the TeX tools are still missing after apt-get install" >&2; exit 1; }
