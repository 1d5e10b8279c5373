"""What every layer may use: errors and their one-line messages, exits, memory."""
