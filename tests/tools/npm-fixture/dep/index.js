module.exports = "cf-dep-ok";
