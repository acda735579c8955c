file(REMOVE_RECURSE
  "libxp_report.a"
)
