"""The workflows the command line and the dashboard share (select, upload, deploy, plan, sweep, the store): requests in, results out."""
