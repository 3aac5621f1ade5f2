package topical

import "strings"

// A theme is what a page is about. Its words are listed roughly from most to least
// frequent; text draws them with Zipf-like weights, so the first ones dominate, as a
// topic's core vocabulary does in real text. Themes share words the way real topics do
// ("power" is sport, computing and electricity; "fuel" is cars and reactors; "radiation"
// is medicine and reactors), which is what makes keyword relevance imperfect.
type theme struct {
	name     string
	words    []string
	sections []string // section names of sites about the theme
	sites    []string // words site names are made of
}

// Theme names. Nuclear and Geo are the topics sonda ships examples for (topics/); the
// others are the rest of the web, some near them, most far.
const (
	Nuclear = "nuclear"
	Geo     = "geo"
)

var themes = []theme{
	{name: Nuclear, words: fields(`nuclear reactor uranium radiation fission plant energy power fuel
		isotope radioactive neutron coolant enrichment atomic waste plutonium core reactors
		safety decay containment turbine electricity spent rod centrifuge thorium fusion
		moderator graphite pressurized boiling water steam meltdown accident emergency
		shielding gamma dose sievert becquerel halflife repository reprocessing breeder
		tokamak plasma deuterium tritium criticality chain reaction yellowcake mining
		regulator licensing inspection safeguards nonproliferation iaea physics engineering
		radioisotope technetium cobalt cesium iodine strontium radiotherapy decommissioning
		cask cooling tower grid megawatt generation technology`),
		sections: fields(`reactors fuel-cycle safety waste fusion research news radiation`),
		sites:    fields(`atomic nuclear reactor fission isotope neutron uranium`)},
	{name: Geo, words: fields(`map data gis geographic spatial shapefile coordinate layer
		mapping satellite dataset projection raster vector imagery elevation survey boundary
		cartography latitude longitude scale census land cover topographic download metadata
		remote sensing landsat polygon feature attribute municipality county region atlas
		geospatial datum utm wgs84 contour hydrography river basin watershed aerial
		orthophoto mosaic spectral thematic vegetation deforestation gazetteer geocoding
		geojson kml geotiff grid resolution pixel gps geodesy soil geology precipitation
		climate temperature`),
		sections: fields(`maps datasets imagery downloads census tools projections atlas`),
		sites:    fields(`map geo atlas carto spatial terra survey`)},
	{name: "electricity", words: fields(`electricity power energy price grid market utility
		tariff kilowatt megawatt generation demand supply transmission solar wind coal gas
		oil fuel renewable battery storage consumer bill efficiency emissions carbon plant
		capacity load peak outage substation voltage electric hydro dam biomass policy
		regulation investment subsidy auction contract trading technology`),
		sections: fields(`markets prices renewables grid policy consumers`),
		sites:    fields(`power grid volt energy watt utility`)},
	{name: "physics", words: fields(`physics quantum particle atom atomic electron proton
		photon laser optics relativity gravity galaxy star planet telescope astronomy
		cosmology universe matter wave field experiment laboratory theory mechanics
		thermodynamics entropy magnetic spectrum orbit comet supernova nebula observatory
		measurement constant symmetry collider accelerator boson quark lepton energy`),
		sections: fields(`astronomy particles quantum lectures observatory`),
		sites:    fields(`quantum cosmos photon stellar physics`)},
	{name: "environment", words: fields(`climate forest species carbon emissions warming
		biodiversity conservation pollution ocean ice glacier drought flood ecosystem
		wildlife habitat recycling sustainability temperature rainfall vegetation soil water
		air ozone greenhouse adaptation mitigation deforestation river protected park`),
		sections: fields(`climate wildlife oceans forests campaigns`),
		sites:    fields(`green earth wild eco planet forest`)},
	{name: "travel", words: fields(`travel hotel flight beach tour city destination island
		museum guide passport luggage itinerary resort cruise booking vacation holiday
		adventure hiking trail mountain restaurant map visa airport train backpacking
		sightseeing coast village`),
		sections: fields(`destinations hotels guides deals tips`),
		sites:    fields(`travel trip voyage journey wander`)},
	{name: "cooking", words: fields(`recipe cook minutes flour sugar butter oven egg salt
		pepper garlic onion tomato sauce pasta rice chicken beef soup salad dessert cake
		bread kitchen ingredient boil grill fry spice cheese vegetable bake`),
		sections: fields(`recipes desserts baking dinner vegetarian`),
		sites:    fields(`kitchen taste spoon recipe cook`)},
	{name: "sport", words: fields(`match team goal player league season coach score win
		championship stadium fans ball referee striker defender midfield transfer cup
		tournament penalty power energy training fitness`),
		sections: fields(`football results transfers teams fixtures`),
		sites:    fields(`goal score league sport match`)},
	{name: "finance", words: fields(`market stock investor bank share interest rate
		inflation bond fund portfolio dividend loan mortgage credit debt tax budget profit
		revenue earnings economy price trading energy`),
		sections: fields(`markets investing banking economy personal`),
		sites:    fields(`money capital invest fund market`)},
	{name: "computing", words: fields(`software code programming computer server data
		database network cloud algorithm security developer application interface processor
		memory chip technology power python linux source version release bug compiler`),
		sections: fields(`programming cloud security hardware tutorials`),
		sites:    fields(`code byte dev stack bit`)},
	{name: "health", words: fields(`patient doctor hospital disease treatment therapy
		cancer drug clinical trial symptom diagnosis vaccine virus infection surgery nurse
		health medical imaging radiation dose heart blood care radiology`),
		sections: fields(`conditions treatments research hospitals wellness`),
		sites:    fields(`health care med clinic well`)},
	{name: "cars", words: fields(`car engine vehicle fuel electric battery motor driver
		speed brake tire hybrid horsepower road model dealer petrol diesel emissions
		charging range test drive`),
		sections: fields(`reviews electric news buying`),
		sites:    fields(`motor auto drive wheel car`)},
	{name: "music", words: fields(`album band song concert guitar music tour singer
		record label festival drums bass vocals lyrics stage release chart`),
		sections: fields(`reviews concerts interviews albums`),
		sites:    fields(`sound beat tune record band`)},
	{name: "gardening", words: fields(`garden plant soil seed flower grow water tree
		compost leaves roots pruning vegetable tomato harvest season rose lawn pest`),
		sections: fields(`vegetables flowers trees tips`),
		sites:    fields(`garden bloom green seed leaf`)},
}

// boilerplate is the vocabulary of pages about no theme: about, contact, privacy, jobs.
var boilerplate = fields(`contact email phone address privacy policy cookies terms
	copyright careers jobs apply team mission history newsletter subscribe login password
	account office hours staff vision values partners press`)

// general is the vocabulary every page draws its theme-neutral words from.
var general = fields(`time year people way day thing life world school family group country
	problem hand part place case week company system program question work number night point
	home room area money story fact month lot right study book job word business issue side
	kind head house service friend change report level office door health person art war
	history party result morning reason research girl guy moment air teacher force education
	city community name president team minute idea kid body information back parent face
	others level office door program process product plan development increase member law
	car test experience view report line end member project event list design amount
	public local national new good first last long great little own other old right big
	high different small large next early young important few able`)

// function are the words that make prose prose.
var function = fields(`the of and to a in is that for it as was with be by on not this are
	or from at which but have an they you were their one all we can has there been if more
	when will would who so no its also into than them some could these other only then
	about over such our after most what many those may must very while where both each`)

var genericAnchors = []string{"read more", "continue reading", "more", "full story", "here",
	"this page", "link", "details", "see more", "learn more"}

func fields(s string) []string { return strings.Fields(s) }

func themeByName(name string) int {
	for i, t := range themes {
		if t.name == name {
			return i
		}
	}
	return -1
}
