;;; eglot_session.el --- drive relavium-lsp from Emacs' eglot like a user would  -*- lexical-binding: t -*-

;; Run by tests/e2e/test_emacs_eglot.py as `emacs --batch --no-init-file -l eglot_session.el`.
;; Environment: RELAVIUM_TEST_SERVER (the server command, a JSON array),
;; RELAVIUM_TEST_WORKSPACE (a git repository holding app.py), RELAVIUM_TEST_REPORT (where
;; the JSON report goes). Requests time out after eglot's 10 s, the message send after 2 s
;; (shorter than the turn it starts), and nothing but eglot itself and a handler for
;; relavium/sessionEvent is configured.

(require 'cl-lib)
(require 'json)
(require 'eglot)

(setq jsonrpc-default-request-timeout 10)
(setq eglot-sync-connect nil)
(setq eglot-autoshutdown nil)

(defvar relavium-test-messages nil "Every message shown, newest first.")
(defvar relavium-test-events nil "Every relavium/sessionEvent notification, newest first.")
(defvar relavium-test-report nil "The report, as an alist.")

(advice-add 'message :around
            (lambda (original format &rest args)
              (when format
                (push (apply #'format-message format args) relavium-test-messages))
              (apply original format args)))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql relavium/sessionEvent)) &rest params)
  "What a user's own configuration would do with the chat's events: keep them."
  (push params relavium-test-events))

(defun relavium-test-note (key value)
  (push (cons key value) relavium-test-report))

(defun relavium-test-wait (what predicate &optional seconds)
  "Let Emacs process output until PREDICATE holds; fail after SECONDS (default 60)."
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun relavium-test-events-of (type)
  (cl-remove-if-not (lambda (event) (equal (plist-get event :type) type))
                    relavium-test-events))

(defun relavium-test-shown (needle)
  (cl-find-if (lambda (message) (string-search needle message)) relavium-test-messages))

(defun relavium-test-shown-since (count needle)
  "The first message containing NEEDLE among those shown after the first COUNT."
  (let ((newer (butlast relavium-test-messages count)))
    (cl-find-if (lambda (message) (string-search needle message)) (reverse newer))))

(defun relavium-test-server-log ()
  "The tail of the server's stderr as eglot kept it: what a failure report needs."
  (let ((buffer (cl-find-if (lambda (b) (string-match-p "stderr" (buffer-name b)))
                            (buffer-list))))
    (if (null buffer)
        ""
      (with-current-buffer buffer
        (buffer-substring-no-properties (max (point-min) (- (point-max) 6000))
                                        (point-max))))))

(defun relavium-test-run-code-action (title beg end)
  "Pick TITLE from eglot's code action menu for BEG..END, as a user would."
  (cl-letf (((symbol-function 'completing-read) (lambda (&rest _) title)))
    ;; A keyboard event, not a mouse one: eglot then asks with `completing-read'.
    (let ((last-nonmenu-event ?\r))
      (eglot-code-actions beg end nil t))))

(defun relavium-test-main ()
  (let* ((command (append (json-parse-string (getenv "RELAVIUM_TEST_SERVER")) nil))
         (workspace (file-name-as-directory (getenv "RELAVIUM_TEST_WORKSPACE")))
         (eglot-server-programs `((python-mode . ,command))))
    (find-file (expand-file-name "app.py" workspace))
    (python-mode)
    (apply #'eglot (eglot--guess-contact))
    (relavium-test-wait "the server" (lambda () (eglot-current-server)))
    (let ((server (eglot-current-server)))
      (relavium-test-wait "initialize" (lambda () (eglot--server-capable :codeActionProvider)))
      ;; start a chat and send a message without waiting for the (slow) turn
      (let* ((started (jsonrpc-request server :relavium/startSession '(:agentRef "coder")))
             (session (plist-get started :sessionId))
             (accepted (jsonrpc-request server :relavium/sendMessage
                                        `(:sessionId ,session :text "Tell me a story."
                                                     :wait :json-false)
                                        :timeout 2)))
        (relavium-test-note 'session session)
        (relavium-test-note 'accepted (plist-get accepted :accepted))
        (relavium-test-note 'userMessageSequence (plist-get accepted :userMessageSequence))
        (relavium-test-wait "the turn to complete"
                            (lambda () (relavium-test-events-of "session:turn_completed")))
        (relavium-test-note 'stopReason (plist-get (car (relavium-test-events-of
                                                          "session:turn_completed"))
                                                    :stopReason))
        (relavium-test-note 'story (mapconcat (lambda (event) (plist-get event :token))
                                              (reverse (relavium-test-events-of "agent:token"))
                                              "")))
      ;; the code actions on the first two lines
      (goto-char (point-min))
      (let* ((beg (point-min))
             (end (progn (forward-line 2) (point)))
             (actions (eglot-code-actions beg end nil nil)))
        (relavium-test-note 'codeActions
                            (vconcat (mapcar (lambda (action) (plist-get action :title))
                                             actions)))
        (let ((shown-before (length relavium-test-messages)))
          (relavium-test-run-code-action "Explain (Relavium)" beg end)
          ;; Any answer the server shows, right or wrong: the test then says which it was.
          (relavium-test-wait "the explanation"
                              (lambda () (relavium-test-shown-since shown-before "Relavium: "))
                              120)
          (relavium-test-note 'explanation
                              (relavium-test-shown-since shown-before "Relavium: ")))
        (relavium-test-run-code-action "Export this chat (Relavium)" beg end)
        (relavium-test-wait "the export's message"
                            (lambda () (relavium-test-shown "Relavium exported")))
        (relavium-test-note 'exportMessage (relavium-test-shown "Relavium exported")))
      (relavium-test-note 'warnings
                          (vconcat (cl-remove-if-not
                                    (lambda (m) (string-search "(type=2)" m))
                                    relavium-test-messages)))
      (eglot-shutdown server))))

(let ((report-file (getenv "RELAVIUM_TEST_REPORT")))
  (condition-case failure
      (relavium-test-main)
    (error (relavium-test-note 'error (error-message-string failure))
           (relavium-test-note 'serverLog (relavium-test-server-log))))
  (relavium-test-note 'messages (vconcat (reverse relavium-test-messages)))
  (with-temp-file report-file
    (insert (json-encode relavium-test-report))))
;;; eglot_session.el ends here
