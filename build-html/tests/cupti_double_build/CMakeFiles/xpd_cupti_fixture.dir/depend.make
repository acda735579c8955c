# Empty dependencies file for xpd_cupti_fixture.
# This may be replaced when dependencies are built.
