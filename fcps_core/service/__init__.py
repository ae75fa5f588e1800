"""The workflows the command line and the dashboard share: requests in, results out."""
