"""The portal's e-mail: messages written to an outbox in the database in the transaction of
what they tell, and sent over SMTP by a sender thread (``sender``), retried while the mail
server is slow or down."""
