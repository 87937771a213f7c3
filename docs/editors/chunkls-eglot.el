;;; chunkls-eglot.el --- chunkls in Emacs with eglot  -*- lexical-binding: t -*-

;; Emacs 28 with eglot 1.9 (Debian: apt-get install emacs-nox elpa-eglot) or
;; Emacs 29+ (eglot built in).  Needs `chunkls' on your PATH
;; (`uv tool install .').  Load it from your init file:
;;   (load "/path/to/chunkls-eglot.el")

;;; Code:

(require 'eglot)

(defvar chunkls-eglot-modes
  '(python-mode python-ts-mode markdown-mode gfm-mode text-mode
    json-mode js-json-mode json-ts-mode)
  "Major modes whose buffers chunkls serves (the JSON ones where installed).")

;; One server for all these modes of a project.  eglot before 1.15 then labels
;; every buffer with the first one's language; chunkls decides by the file's
;; suffix (.py, .md, .markdown, .txt, .json, .jsonl, ...), so that does no harm.
(add-to-list 'eglot-server-programs
             (cons chunkls-eglot-modes '("chunkls" "serve")))

;; Without markdown-mode, Markdown files open in text-mode (chunkls serves it).
(unless (fboundp 'markdown-mode)
  (add-to-list 'auto-mode-alist '("\\.\\(?:md\\|markdown\\)\\'" . text-mode)))

;; JSON Lines session logs (an agent's): Emacs gives them no mode.  A JSON mode
;; where there is one (json-mode, Emacs 29's js-json-mode), else text-mode.
(unless (assoc-default "x.jsonl" auto-mode-alist #'string-match)
  (add-to-list 'auto-mode-alist
               (cons "\\.\\(?:jsonl\\|ndjson\\)\\'"
                     (cond ((fboundp 'json-mode) 'json-mode)
                           ((fboundp 'js-json-mode) 'js-json-mode)
                           (t 'text-mode)))))

(defun chunkls-eglot-ensure ()
  "Start chunkls (eglot) in a buffer of one of `chunkls-eglot-modes'."
  (when (memq major-mode chunkls-eglot-modes)
    (eglot-ensure)))

(add-hook 'after-change-major-mode-hook #'chunkls-eglot-ensure)

(provide 'chunkls-eglot)
;;; chunkls-eglot.el ends here
