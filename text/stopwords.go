package text

import "strings"

// The stop-word lists below were written for sonda from the closed word classes of each
// language (articles, pronouns, prepositions and their contractions, conjunctions, the
// forms of the most common auxiliary verbs, and a few adverbs that carry no topic), using
// ordinary grammar references rather than any published stop-word list. Fragments that
// the tokenizer leaves after splitting at apostrophes ("don" of "don't", French "qu") are
// included; words whose other meaning is a common noun ("estado": state, been) are left
// out. Words are stored as written and compared folded, so accents never matter.
//
// detectOnly lists are used by DetectLanguage alone, so that a German, Italian or Dutch
// page is not taken for one of the stemmed languages; sonda does not stem those.

var stopWordText = map[string]string{
	"en": `a an the this that these those
	i me my mine myself we us our ours ourselves you your yours yourself yourselves
	he him his himself she her hers herself it its itself they them their theirs themselves
	who whom whose which what whatever whoever
	am is are was were be been being have has had having do does did doing done
	will would shall should can could may might must ought
	and but or nor if then else so because as until while although though whether
	of at by for with about against between into through during before after above below
	to from up down in out on off over under again further once upon within without
	via per onto toward towards among
	here there when where why how all any both each few more most other some such
	no not only own same than too very just also yet now ever even still
	let lets
	don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn mustn
	shan needn mightn ll re ve s t d m`,

	"pt": `o a os as um uma uns umas
	ao aos à às do da dos das no na nos nas dum duma duns dumas num numa nuns numas
	pelo pela pelos pelas dele dela deles delas nele nela neles nelas deste desta destes
	destas neste nesta nestes nestas desse dessa desses dessas nesse nessa nesses nessas
	daquele daquela daqueles daquelas naquele naquela naqueles naquelas daquilo naquilo
	este esta estes estas isto esse essa esses essas isso aquele aquela aqueles aquelas aquilo
	eu me mim comigo tu te ti contigo ele ela eles elas lhe lhes se si consigo
	nós nos conosco vós vos convosco você vocês
	meu minha meus minhas teu tua teus tuas seu sua seus suas nosso nossa nossos nossas
	vosso vossa vossos vossas
	que quem qual quais cujo cuja cujos cujas onde quando como quanto quanta quantos quantas
	de em por para com sem sob sobre entre até após ante desde contra perante durante
	e ou mas nem porém contudo todavia porque pois portanto se embora enquanto logo
	é são era eram foi foram ser sido sendo seja sejam será serão seria seriam fosse
	está estão estava estavam esteve estiveram estar estando esteja estejam
	há havia houve haver tem têm tinha tinham teve tiveram ter tido tendo tenha tenham
	terá terão teria
	não sim já ainda também só apenas mais menos muito muita muitos muitas pouco pouca
	tão tanto tanta todo toda todos todas tudo nada algo alguém ninguém algum alguma
	alguns algumas nenhum nenhuma outro outra outros outras mesmo mesma mesmos mesmas
	cada qualquer quaisquer aqui ali lá aí então assim depois antes agora sempre nunca
	pode podem deve devem`,

	"es": `el la los las lo un una unos unas al del
	este esta estos estas esto ese esa esos esas eso aquel aquella aquellos aquellas aquello
	yo me mí conmigo tú te ti contigo él ella ello ellos ellas le les se sí consigo
	nosotros nosotras nos vosotros vosotras os usted ustedes
	mi mis tu tus su sus nuestro nuestra nuestros nuestras vuestro vuestra vuestros vuestras
	mío mía míos mías tuyo tuya tuyos tuyas suyo suya suyos suyas
	que quien quienes cual cuales cuyo cuya cuyos cuyas donde cuando como cuanto cuanta
	cuantos cuantas
	a ante bajo con contra de desde durante en entre hacia hasta mediante para por según
	sin sobre tras
	y e ni o u pero sino aunque porque pues si mientras que
	es son era eran fue fueron ser sido siendo sea sean será serán sería serían fuera
	está están estaba estaban estuvo estar estando esté estén
	ha han he has hemos había habían hubo haber habido habiendo haya hayan habrá
	tiene tienen tenía tenían tuvo tener tenido teniendo tenga tengan hay
	no sí ya también solo sólo más menos muy mucho mucha muchos muchas poco poca pocos
	pocas tan tanto tanta todo toda todos todas nada algo alguien nadie algún alguna
	algunos algunas ningún ninguna otro otra otros otras mismo misma mismos mismas
	cada cualquier aquí allí allá ahí entonces así después antes ahora siempre nunca
	puede pueden debe deben`,

	"fr": `le la les l un une des du de d au aux
	ce cet cette ces ceci cela ça celui celle ceux celles
	je j me m moi tu te t toi il elle on nous vous ils elles lui leur leurs eux se s soi
	y en
	mon ma mes ton ta tes son sa ses notre nos votre vos
	qui que qu quoi dont où lequel laquelle lesquels lesquelles auquel duquel
	à après avant avec chez contre dans depuis derrière devant entre envers hors jusque
	malgré par parmi pendant pour sans selon sous sur vers
	et ou mais ni car donc or si comme quand lorsque puisque quoique
	est sont était étaient fut furent être été étant soit soient sera seront serait
	ai as a avons avez ont avait avaient eut eurent avoir eu ayant ait aient aura auront
	aurait
	ne n pas plus moins non oui déjà encore aussi très trop peu beaucoup tout toute tous
	toutes rien personne quelque quelques quelqu aucun aucune autre autres même mêmes
	chaque ici là alors ainsi puis ensuite toujours jamais peut doit`,
}

var detectOnlyText = map[string]string{
	"de": `der die das den dem des ein eine einer einen einem eines und oder aber ist sind war
	waren wird werden wurde wurden hat haben hatte nicht auch sich mit von zu zum zur auf für
	im bei aus nach über vor bis durch dass wie noch nur mehr ich du er sie es wir ihr man
	sein seine ihre dieser diese dieses wenn weil`,
	"it": `il lo la gli le un uno una di del dello della dei degli delle da dal dalla nel nella
	nei sul sulla con per tra fra che chi cui non è sono era erano essere stato ha hanno
	anche come più ma perché quando questo questa questi queste quello quella ed io tu lui
	lei noi voi loro si ci`,
	"nl": `de het een en van in op te dat die dit deze is zijn was waren wordt worden werd heeft
	hebben had niet ook met voor aan door naar om bij uit over als maar dan nog wel geen
	meer tot hij zij wij jij ik er ze je`,
}

// stopSets are the stop words of the stemmed languages, folded.
var stopSets = foldedSets(stopWordText)

// detectSets are every language's word set for DetectLanguage.
var detectSets = func() map[string]map[string]bool {
	all := foldedSets(detectOnlyText)
	for l, s := range stopSets {
		all[l] = s
	}
	return all
}()

func foldedSets(lists map[string]string) map[string]map[string]bool {
	sets := make(map[string]map[string]bool, len(lists))
	for lang, list := range lists {
		set := map[string]bool{}
		for _, w := range strings.Fields(list) {
			set[Fold(w)] = true
		}
		sets[lang] = set
	}
	return sets
}

// StopWords returns the stop words of lang, folded and sorted (nil for a language sonda
// does not stem).
func StopWords(lang string) []string {
	set := stopSets[NormalizeLang(lang)]
	if set == nil {
		return nil
	}
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	sortStrings(out)
	return out
}
