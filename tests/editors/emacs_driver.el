;;; emacs_driver.el --- drive eglot + chunkls headless  -*- lexical-binding: t -*-

;; Run after docs/editors/chunkls-eglot.el:
;;   emacs --batch -l chunkls-eglot.el -l emacs_driver.el
;; CHUNKLS_WORKSPACE: the workspace; CHUNKLS_RESULT: where the JSON goes;
;; CHUNKLS_SCENARIO: "text-first" (a text-mode .txt note starts the server, then
;; a Markdown note: definition, hover, search, diagnostics, rename + save) or
;; "python-first" (a Python file starts it, then a Markdown note: eglot < 1.15
;; labels the note "python").  Every wait is bounded.

;;; Code:

(require 'json)
(require 'xref)
(require 'flymake)

(defvar chunkls-results nil "Findings, as an alist.")
(defconst chunkls-step 30 "Seconds to wait at most for any one answer.")
(defconst chunkls-workspace (file-name-as-directory (getenv "CHUNKLS_WORKSPACE")))
(setq make-backup-files nil)

(defun chunkls-put (key value)
  "Record VALUE under KEY."
  (push (cons key value) chunkls-results))

(defun chunkls-finish (code)
  "Write the findings and exit with CODE."
  (with-temp-file (getenv "CHUNKLS_RESULT")
    (insert (json-encode chunkls-results)))
  (kill-emacs code))

(defun chunkls-wait (predicate)
  "Wait until PREDICATE returns non-nil, `chunkls-step' seconds at most."
  (let ((deadline (+ (float-time) chunkls-step))
        (value nil))
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) deadline))
      (accept-process-output nil 0.1))
    value))

(defun chunkls-open (relative)
  "Visit RELATIVE as a user would; eglot connects; return the buffer."
  (find-file (expand-file-name relative chunkls-workspace))
  ;; the command loop's end: eglot-ensure connects there
  (run-hooks 'post-command-hook)
  (unless (chunkls-wait (lambda () (and (bound-and-true-p eglot--managed-mode)
                                        (eglot-current-server))))
    (error "eglot did not manage %s (%s)" relative major-mode))
  (current-buffer))

(defun chunkls-server-language ()
  "The one language ID eglot < 1.15 sends for every buffer of the server."
  (or (ignore-errors (eglot--language-id (eglot-current-server))) "per-buffer"))

(defun chunkls-goto (needle)
  "Put point inside the first NEEDLE."
  (goto-char (point-min))
  (search-forward needle)
  (goto-char (+ (match-beginning 0) 2)))

(defun chunkls-locations (needle)
  "Where eglot's xref backend says the ID at NEEDLE is defined."
  (chunkls-goto needle)
  (mapcar (lambda (item)
            (let ((location (xref-item-location item)))
              `((path . ,(xref-location-group location))
                (line . ,(xref-location-line location)))))
          (xref-backend-definitions 'eglot (xref-backend-identifier-at-point 'eglot))))

(defun chunkls-definition (needle)
  "The definition of the ID at NEEDLE, waiting for the index."
  (let (found)
    (chunkls-wait (lambda () (setq found (chunkls-locations needle))))
    found))

(defun chunkls-diagnostics ()
  "The buffer's Flymake diagnostics: line and message."
  (flymake-start)
  (mapcar (lambda (d) `((line . ,(line-number-at-pos (flymake-diagnostic-beg d)))
                        (message . ,(flymake-diagnostic-text d))))
          (flymake-diagnostics)))

(defun chunkls-diagnostic-on-p (line)
  "Whether a diagnostic is on LINE."
  (seq-some (lambda (d) (= (alist-get 'line d) line)) (chunkls-diagnostics)))

(defun chunkls-text-first ()
  "A text-mode note starts the server; then the Markdown note's checks."
  (chunkls-open "notes/editor.txt")
  (chunkls-put 'txt_mode major-mode)
  (chunkls-put 'txt_language (chunkls-server-language))
  (chunkls-put 'txt_definition (chunkls-definition "app/greet.py#function-greet"))
  (let ((note (chunkls-open "notes/editor.md")))
    (chunkls-put 'md_mode major-mode)
    (chunkls-put 'definition (chunkls-definition "app/greet.py#function-greet"))
    ;; an agent's JSON Lines session log: its escaped ID resolves
    (chunkls-open "notes/session.jsonl")
    (chunkls-put 'jsonl_mode major-mode)
    (chunkls-put 'jsonl_definition (chunkls-definition "app\\/greet.py#function-greet"))
    (switch-to-buffer note)
    (chunkls-goto "app/greet.py#function-greet")
    (let ((hover (jsonrpc-request (eglot-current-server) :textDocument/hover
                                  (eglot--TextDocumentPositionParams))))
      (chunkls-put 'hover (plist-get (plist-get hover :contents) :value)))
    (chunkls-put 'symbols (mapcar #'xref-item-summary
                                  (xref-backend-apropos 'eglot "greeting")))
    (chunkls-wait (lambda () (chunkls-diagnostic-on-p 4)))
    (chunkls-put 'diagnostics_before (chunkls-diagnostics))
    ;; rename greet() to salute() in app/greet.py and save
    (chunkls-open "app/greet.py")
    (goto-char (point-min))
    (search-forward "def greet(name")
    (replace-match "def salute(name" t t)
    (save-buffer)
    (switch-to-buffer note)
    (chunkls-put 'definition_after_save
                 (chunkls-definition "app/greet.py#function-salute"))
    (chunkls-put 'old_definition_after_save
                 (chunkls-locations "app/greet.py#function-greet"))
    (chunkls-wait (lambda () (not (chunkls-diagnostic-on-p 4))))
    (chunkls-put 'diagnostics_after (chunkls-diagnostics))))

(defun chunkls-python-first ()
  "A Python file starts the server; a Markdown note opened next still navigates."
  (chunkls-open "app/greet.py")
  (chunkls-put 'py_mode major-mode)
  (chunkls-open "notes/editor.md")
  (chunkls-put 'md_mode major-mode)
  (chunkls-put 'md_language (chunkls-server-language))
  (chunkls-put 'definition (chunkls-definition "app/greet.py#function-greet")))

(run-at-time 150 nil (lambda ()
                       (chunkls-put 'error "watchdog: the driver took too long")
                       (chunkls-finish 2)))
(condition-case err
    (progn
      (chunkls-put 'emacs emacs-version)
      (pcase (getenv "CHUNKLS_SCENARIO")
        ("text-first" (chunkls-text-first))
        ("python-first" (chunkls-python-first))
        (other (error "Unknown scenario %S" other)))
      (chunkls-finish 0))
  (error (chunkls-put 'error (error-message-string err))
         (chunkls-finish 1)))

;;; emacs_driver.el ends here
